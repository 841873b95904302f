// knee report charts: plain SVG, no library, nothing fetched.
// When done it writes data-charts-drawn on <body>; any error lands in
// data-errors, so a headless browser test can tell a drawn page from a broken one.
(function () {
  'use strict';
  var body = document.body;
  var errors = [];
  function fail(msg) {
    errors.push(String(msg));
    body.setAttribute('data-errors', errors.join(' | '));
  }
  window.addEventListener('error', function (e) { fail(e.message + ' (line ' + e.lineno + ')'); });

  var SVGNS = 'http://www.w3.org/2000/svg'; // a namespace name, not a URL that is fetched
  var W = 760, H = 330, M = { left: 80, right: 24, top: 44, bottom: 48 };
  // COLORS and NAMES come from the palette knee emits with the data (report.Palette),
  // so a series has one colour and one name in the plots, this page and the dashboard.
  var COLORS = {}, NAMES = {};
  var DISTINCT = ['p50', 'p99', 'achieved', 'p95', 'errors', 'send_lag', 'busy_vus'];

  function usePalette(p) {
    for (var k in p) { COLORS[k] = p[k].color; NAMES[k] = p[k].name; }
  }

  function el(name, attrs, parent, text) {
    var n = document.createElementNS(SVGNS, name);
    for (var k in attrs) { n.setAttribute(k, attrs[k]); }
    if (text !== undefined) { n.textContent = text; }
    if (parent) { parent.appendChild(n); }
    return n;
  }
  // fmtMs keeps three or four significant digits, as the tables do.
  function fmtMs(ms) {
    if (ms === 0) { return '0'; }
    if (ms < 1) { return +(ms * 1000).toPrecision(3) + 'µs'; }
    if (ms < 1000) { return +ms.toPrecision(3) + 'ms'; }
    return +(ms / 1000).toPrecision(3) + 's';
  }
  function fmtNum(v) { return String(+v.toPrecision(4)); }

  // An axis maps data to pixels; log axes need positive data.
  function axis(kind, lo, hi, p0, p1) {
    if (kind === 'log') {
      lo = Math.log10(lo); hi = Math.log10(hi);
      if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
      return { kind: kind, lo: lo, hi: hi, px: function (v) { return p0 + (Math.log10(v) - lo) / (hi - lo) * (p1 - p0); },
        inv: function (p) { return Math.pow(10, lo + (p - p0) / (p1 - p0) * (hi - lo)); } };
    }
    if (hi - lo < 1e-12) { hi = lo + 1; }
    return { kind: kind, lo: lo, hi: hi, px: function (v) { return p0 + (v - lo) / (hi - lo) * (p1 - p0); },
      inv: function (p) { return lo + (p - p0) / (p1 - p0) * (hi - lo); } };
  }

  // niceLog widens a log range to 1, 2 or 5 times a power of ten, so both
  // ends of the axis carry a label.
  function niceLog(lo, hi) {
    function down(v) { var p = Math.pow(10, Math.floor(Math.log10(v))); return (v >= 5 * p ? 5 : v >= 2 * p ? 2 : 1) * p; }
    function up(v) { var p = Math.pow(10, Math.floor(Math.log10(v))); return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p; }
    return [down(lo), up(hi)];
  }

  // ticks: decades with 2 and 5 between when the range is short, plus the
  // ends where there is room (log); about six round steps (linear).
  function ticks(ax) {
    var out = [], v;
    if (ax.kind === 'log') {
      var span = ax.hi - ax.lo, mults = span <= 2.5 ? [1, 2, 5] : [1];
      for (var e = Math.floor(ax.lo); e <= Math.ceil(ax.hi); e++) {
        for (var i = 0; i < mults.length; i++) {
          v = mults[i] * Math.pow(10, e);
          var lv = Math.log10(v);
          if (lv >= ax.lo - 1e-9 && lv <= ax.hi + 1e-9) { out.push(v); }
        }
      }
      // Label the ends too, unless a round tick is already within ~18 px (labels would overlap).
      [Math.pow(10, ax.lo), Math.pow(10, ax.hi)].forEach(function (end) {
        if (out.every(function (t) { return Math.abs(ax.px(t) - ax.px(end)) >= 18; })) { out.push(end); }
      });
      return out;
    }
    var raw = (ax.hi - ax.lo) / 6, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (s) { return s >= raw; })[0];
    for (v = Math.ceil(ax.lo / step) * step; v <= ax.hi + step * 1e-9; v += step) { out.push(+v.toPrecision(12)); }
    return out;
  }

  // extent is the [lo, hi] of coordinate pick over every point; with xr, only
  // over points inside the x range or on a segment that crosses it.
  function extent(series, pick, positive, xr) {
    var lo = Infinity, hi = -Infinity;
    function near(q, p) {
      return q && q[1] !== null && isFinite(q[0]) && Math.min(q[0], p[0]) <= xr[1] && Math.max(q[0], p[0]) >= xr[0];
    }
    series.forEach(function (s) {
      s.pts.forEach(function (p, i) {
        var v = p[pick];
        if (v === null || !isFinite(v) || (positive && v <= 0)) { return; }
        if (xr && p[0] !== null && !(p[0] >= xr[0] && p[0] <= xr[1]) && !near(s.pts[i - 1], p) && !near(s.pts[i + 1], p)) { return; }
        lo = Math.min(lo, v); hi = Math.max(hi, v);
      });
    });
    return [lo, hi];
  }

  // fmtExact is what a hover shows: the number as measured, six significant digits.
  function fmtExact(v, unit) {
    if (v === null || v === undefined || !isFinite(v)) { return 'no data'; }
    return String(+v.toPrecision(6)) + (unit ? ' ' + unit : '');
  }

  // A time group is the charts over the run's seconds: they share one cursor
  // and one zoom, so a spike in latency lines up with the rate, errors and VUs.
  function timeGroup() {
    var g = { charts: [], range: null, full: [0, 1] };
    g.zoom = function (lo, hi) {
      var f = g.full;
      lo = Math.max(lo, f[0]); hi = Math.min(hi, f[1]);
      if (!(hi - lo > (f[1] - f[0]) * 1e-3)) { return; }
      g.range = (lo <= f[0] && hi >= f[1]) ? null : [lo, hi];
      g.redraw();
    };
    g.reset = function () { g.range = null; g.redraw(); };
    g.redraw = function () {
      g.charts.forEach(function (c) { c.draw(); });
      var r = g.range || g.full;
      body.setAttribute('data-zoom', fmtNum(r[0]) + '-' + fmtNum(r[1]));
    };
    g.cursor = function (t) { g.charts.forEach(function (c) { c.cursor(t); }); };
    g.hide = function () { g.charts.forEach(function (c) { c.hideCursor(); }); };
    return g;
  }

  var charts = {};

  // chart draws (or redraws, when called again with the same id) one SVG line
  // chart from spec into the figure with id. Charts of a time group take their
  // x range from the group.
  function chart(id, spec, group) {
    var fig = document.getElementById(id);
    var c = charts[id];
    if (!c) {
      c = charts[id] = { id: id, fig: fig, group: group, range: null };
      c.draw = function () { render(c); };
      c.cursor = function () {};
      c.hideCursor = function () {};
      if (group) {
        group.charts.push(c);
        var b = document.createElement('button');
        b.type = 'button'; b.className = 'reset'; b.textContent = 'reset zoom';
        b.title = 'drag across a chart or turn the wheel over it to zoom in time; double-click also resets';
        b.addEventListener('click', function () { group.reset(); });
        fig.appendChild(b);
      }
    }
    c.spec = spec;
    fig.hidden = false;
    c.draw();
    return c;
  }

  function render(c) {
    var spec = c.spec, fig = c.fig;
    if (c.svg) { fig.removeChild(c.svg); }
    var svg = c.svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': spec.title, 'class': 'chart-svg' });
    fig.insertBefore(svg, fig.querySelector('button.reset'));
    el('text', { x: M.left, y: 18, 'class': 'title' }, svg, spec.title);
    var top = M.top + 18 * (legend(svg, spec.series.concat(spec.hrefs || [])) - 1);
    var ylog = spec.y.kind === 'log';
    var xe = c.group ? (c.group.range || c.group.full) : (spec.x.range || extent(spec.series, 0, spec.x.kind === 'log'));
    var all = spec.series.concat((spec.hrefs || []).map(function (r) { return { pts: [[null, r.y]] }; }));
    var ye = extent(all, 1, ylog, c.group ? xe : null);
    if (spec.y.zero) { ye[0] = 0; }
    if (!isFinite(ye[0]) || !isFinite(ye[1])) { ye = [ylog ? 0.1 : 0, 1]; }
    if (ylog) { ye = niceLog(ye[0] / 1.15, ye[1] * 1.15); } else { ye[1] = ye[1] > 0 ? ye[1] * 1.08 : 1; }
    if (!c.group && !spec.x.range && spec.x.kind === 'lin') { var pad = (xe[1] - xe[0]) * 0.04 || 1; xe = [xe[0] - pad, xe[1] + pad]; }
    var x = c.x = axis(spec.x.kind, xe[0], xe[1], M.left, W - M.right);
    var y = c.y = axis(spec.y.kind, ye[0], ye[1], H - M.bottom, top);
    svg.setAttribute('data-x-range', fmtNum(x.lo) + '-' + fmtNum(x.hi));
    var fy = spec.y.fmt || fmtNum, fx = spec.x.fmt || fmtNum;
    ticks(y).forEach(function (v) {
      el('line', { x1: M.left, x2: W - M.right, y1: y.px(v), y2: y.px(v), 'class': 'grid' }, svg);
      el('text', { x: M.left - 6, y: y.px(v) + 4, 'text-anchor': 'end', 'class': 'tick' }, svg, fy(v));
    });
    (spec.x.ticks || ticks(x).map(function (v) { return { v: v, label: fx(v) }; })).forEach(function (t) {
      el('line', { x1: x.px(t.v), x2: x.px(t.v), y1: top, y2: H - M.bottom, 'class': 'grid' }, svg);
      el('text', { x: x.px(t.v), y: H - M.bottom + 16, 'text-anchor': 'middle', 'class': 'tick xtick' }, svg, t.label);
    });
    el('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, 'class': 'axis' }, svg);
    el('line', { x1: M.left, x2: M.left, y1: top, y2: H - M.bottom, 'class': 'axis' }, svg);
    el('text', { x: (M.left + W - M.right) / 2, y: H - 10, 'text-anchor': 'middle' }, svg, spec.x.label);
    el('text', { x: 14, y: (top + H - M.bottom) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (top + H - M.bottom) / 2 + ')' }, svg, spec.y.label);
    // The plot area is a nested viewport in the same coordinates: it clips
    // what a zoom pushes outside without a clip-path reference.
    var pw = W - M.right - M.left, ph = H - M.bottom - top;
    var area = el('svg', { x: M.left, y: top, width: pw, height: ph, viewBox: M.left + ' ' + top + ' ' + pw + ' ' + ph, overflow: 'hidden' }, svg);
    (spec.vrefs || []).forEach(function (r) {
      if (!(r.x > 0)) { return; }
      el('line', { x1: x.px(r.x), x2: x.px(r.x), y1: top, y2: H - M.bottom, stroke: r.color, 'stroke-dasharray': '2 3', 'stroke-width': 1.5 }, area);
      var right = x.px(r.x) > (M.left + W - M.right) / 2; // label on the side with room
      el('text', { x: x.px(r.x) + (right ? -4 : 4), y: top + 12, 'text-anchor': right ? 'end' : 'start',
        style: 'fill:' + r.color }, area, r.label);
    });
    (spec.hrefs || []).forEach(function (r) {
      if (ylog && !(r.y > 0)) { return; }
      el('line', { x1: M.left, x2: W - M.right, y1: y.px(r.y), y2: y.px(r.y), stroke: r.color, 'stroke-dasharray': '6 4', 'stroke-width': 1.2, opacity: 0.8 }, area);
    });
    (spec.spans || []).forEach(function (f) {
      var x0 = x.px(f.start_s), x1 = x.px(f.end_s);
      el('rect', { x: x0, y: top, width: Math.max(2, x1 - x0), height: H - M.bottom - top, fill: COLORS.fault,
        'fill-opacity': 0.22, 'class': 'fault', 'data-fault': f.label }, area);
      el('text', { x: x0 + 4, y: H - M.bottom - 6, 'class': 'faultlabel' }, area, f.label);
    });
    spec.series.forEach(function (s) { drawSeries(area, s, x, y, fy, fx, ylog); });
    interact(c, svg, top, fx);
  }

  // interact adds the hover cursor and, for time charts, the zoom.
  function interact(c, svg, top, fx) {
    var spec = c.spec, x = c.x, bottom = H - M.bottom;
    var cur = el('line', { x1: 0, x2: 0, y1: top, y2: bottom, 'class': 'cursor', visibility: 'hidden' }, svg);
    var sel = el('rect', { x: 0, y: top, width: 0, height: bottom - top, 'class': 'sel', visibility: 'hidden' }, svg);
    var tip = el('g', { 'class': 'tip', visibility: 'hidden' }, svg);
    var over = el('rect', { x: M.left, y: top, width: W - M.right - M.left, height: bottom - top, 'class': 'overlay' }, svg);
    c.hideCursor = function () { cur.setAttribute('visibility', 'hidden'); tip.setAttribute('visibility', 'hidden'); };
    c.cursor = function (t) {
      var px = x.px(t);
      if (!(px >= M.left - 0.5 && px <= W - M.right + 0.5)) { c.hideCursor(); return; }
      var info = spec.lookup ? spec.lookup(t) : nearest(spec, x, px, fx);
      if (!info) { c.hideCursor(); return; }
      cur.setAttribute('x1', px); cur.setAttribute('x2', px); cur.setAttribute('visibility', 'visible');
      while (tip.firstChild) { tip.removeChild(tip.firstChild); }
      var bg = el('rect', { 'class': 'tipbg', rx: 3 }, tip);
      el('text', { x: 8, y: 16, 'class': 'tiphead' }, tip, info.head);
      info.rows.forEach(function (r, i) {
        el('rect', { x: 8, y: 25 + 16 * i, width: 10, height: 10, fill: r.color }, tip);
        el('text', { x: 22, y: 34 + 16 * i, 'class': 'tiprow' }, tip, r.name + ': ' + r.value);
      });
      tip.setAttribute('visibility', 'visible');
      var bb = tip.getBBox();
      bg.setAttribute('width', bb.width + 14); bg.setAttribute('height', bb.height + 10);
      bg.setAttribute('x', 0); bg.setAttribute('y', 0);
      var tx = px + 12 + bb.width + 14 > W - M.right ? px - 12 - bb.width - 14 : px + 12;
      tip.setAttribute('transform', 'translate(' + tx + ' ' + (top + 6) + ')');
      var hover = info.head + ' | ' + info.rows.map(function (r) { return r.name + ': ' + r.value; }).join(' | ');
      c.fig.setAttribute('data-hover', hover);
    };
    function toX(evt) {
      var pt = svg.createSVGPoint();
      pt.x = evt.clientX; pt.y = evt.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    var g = c.group, drag = null;
    over.addEventListener('mousemove', function (evt) {
      var px = toX(evt);
      if (drag !== null) {
        sel.setAttribute('x', Math.min(px, drag)); sel.setAttribute('width', Math.abs(px - drag));
        sel.setAttribute('visibility', 'visible');
      }
      if (g) { g.cursor(x.inv(px)); } else { c.cursor(x.inv(px)); }
    });
    over.addEventListener('mouseleave', function () {
      if (g) { g.hide(); } else { c.hideCursor(); }
    });
    if (!g) { return; }
    over.addEventListener('mousedown', function (evt) { if (evt.button === 0) { drag = toX(evt); evt.preventDefault(); } });
    over.addEventListener('mouseup', function (evt) {
      var from = drag, px = toX(evt);
      drag = null;
      sel.setAttribute('visibility', 'hidden');
      if (from !== null && Math.abs(px - from) > 4) { g.zoom(x.inv(Math.min(px, from)), x.inv(Math.max(px, from))); }
    });
    over.addEventListener('wheel', function (evt) {
      evt.preventDefault();
      var t = x.inv(toX(evt)), f = evt.deltaY > 0 ? 1.25 : 0.8;
      g.zoom(t - (t - x.lo) * f, t + (x.hi - t) * f);
    }, { passive: false });
    over.addEventListener('dblclick', function () { g.reset(); });
  }

  // nearest is the point of each series closest to px (charts over rates
  // and percentiles: one value per marker).
  function nearest(spec, x, px, fx) {
    var best = null, rows = [];
    spec.series.forEach(function (s) {
      var pick = null, d = Infinity;
      s.pts.forEach(function (p) {
        if (p[1] === null || !isFinite(p[1]) || !isFinite(p[0])) { return; }
        var dd = Math.abs(x.px(p[0]) - px);
        if (dd < d) { d = dd; pick = p; }
      });
      if (!pick || d > 40) { return; }
      if (!best || d < best.d) { best = { d: d, p: pick }; }
      rows.push({ name: s.name, color: s.color, value: (spec.x.point ? '' : (pick[2] || fx(pick[0])) + ' → ') + (spec.y.exact || fmtExact)(pick[1]) });
    });
    if (!best) { return null; }
    return { head: spec.x.point ? (best.p[2] || fx(best.p[0])) : spec.x.label, rows: rows };
  }

  // drawSeries splits the line at missing points, so a gap shows as a gap.
  function drawSeries(svg, s, x, y, fy, fx, ylog) {
    var d = '', pen = false;
    s.pts.forEach(function (p) {
      var ok = p[1] !== null && isFinite(p[1]) && (!ylog || p[1] > 0) && isFinite(p[0]);
      if (!ok) { pen = false; return; }
      d += (pen ? 'L' : 'M') + x.px(p[0]).toFixed(1) + ' ' + y.px(p[1]).toFixed(1);
      pen = true;
    });
    if (d) { el('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': s.width || 2, 'stroke-dasharray': s.dash || '', 'data-series': s.key || '' }, svg); }
    if (!s.markers) { return; }
    s.pts.forEach(function (p) {
      if (p[1] === null || !isFinite(p[1]) || (ylog && p[1] <= 0)) { return; }
      var c = el('circle', { cx: x.px(p[0]).toFixed(1), cy: y.px(p[1]).toFixed(1), r: 3.5, fill: s.color }, svg);
      el('title', {}, c, s.name + ': ' + (p[2] || fx(p[0])) + ' → ' + fy(p[1]));
    });
  }

  // legend wraps to more rows when needed and returns how many it used.
  function legend(svg, items) {
    var lx = M.left + 8, row = 0;
    items.forEach(function (it) {
      if (!it.name) { return; }
      var g = el('g', {}, svg);
      el('line', { x1: 0, x2: 22, y1: -4, y2: -4, stroke: it.color, 'stroke-width': 2.5, 'stroke-dasharray': it.dash || '' }, g);
      var w = 27 + el('text', { x: 27, y: 0 }, g, it.name).getComputedTextLength() + 16;
      if (lx + w > W - M.right && lx > M.left + 8) { lx = M.left + 8; row++; }
      g.setAttribute('transform', 'translate(' + lx + ' ' + (36 + 18 * row) + ')');
      lx += w;
    });
    return row + 1;
  }

  // steps draws each window flat over its span (a window has one value, not
  // a slope), joined to the next by a vertical step: one connected line,
  // broken only where a window has no value or time has a hole.
  function steps(start, end, vals) {
    var pts = [];
    vals.forEach(function (v, i) {
      if (i > 0 && Math.abs(end[i - 1] - start[i]) > 1e-9) { pts.push([start[i], null]); }
      pts.push([start[i], v]); pts.push([end[i], v]);
    });
    return pts;
  }

  // spanLookup finds the window holding t and reports every series' value in it.
  function spanLookup(start, end, rows) {
    return function (t) {
      for (var i = 0; i < start.length; i++) {
        if (t >= start[i] && (t < end[i] || (i === start.length - 1 && t <= end[i]))) {
          return { head: fmtNum(start[i]) + '–' + fmtNum(end[i]) + ' s', rows: rows.map(function (r) {
            return { name: r.name, color: r.color, value: r.fmt(r.vals[i]) };
          }) };
        }
      }
      return null;
    };
  }

  function series(key, label, vals, start, end, extra) {
    var s = { key: key, name: label || NAMES[key] || key, color: COLORS[key] || 'currentColor', pts: steps(start, end, vals), vals: vals };
    for (var k in extra) { s[k] = extra[k]; }
    return s;
  }

  function timeAxis() { return { kind: 'lin', label: 'seconds since start', time: true }; }

  function fmtBytes(v) {
    var units = ['B/s', 'kB/s', 'MB/s', 'GB/s'], i = 0;
    while (Math.abs(v) >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return +v.toPrecision(3) + ' ' + units[i];
  }

  // drawTime draws every chart over time from the run's chart windows
  // (analyze.Timeline): one resolution for all, fault spans shaded on each.
  function drawTime(t, group) {
    var P = t.points, start = P.map(function (p) { return p.start_s; }), end = P.map(function (p) { return p.end_s; });
    var w = fmtNum(t.window_s) + ' s';
    var spans = t.faults || [];
    var ms = function (v) { return fmtExact(v, 'ms'); }, count = function (v) { return fmtExact(v); };
    var rps = function (v) { return fmtExact(v, 'req/s'); };
    var lat = function (pts, k) { return pts.map(function (p) { return p.requests > 0 ? p.latency_ms[k] : null; }); };
    function timeChart(id, title, y, ser) {
      chart(id, { title: title, x: timeAxis(), y: y, series: ser, spans: spans, lookup: spanLookup(start, end, ser) }, group);
    }
    var latency = [
      series('max', NAMES.max + ' per window', lat(P, 'max'), start, end, { width: 1.2, dash: '2 2', fmt: ms }),
      series('p99', NAMES.p99 + ' per window', lat(P, 'p99'), start, end, { width: 3.5, fmt: ms }),
      series('p95', NAMES.p95 + ' per window', lat(P, 'p95'), start, end, { width: 2.5, fmt: ms }),
      series('p50', NAMES.p50 + ' per window', lat(P, 'p50'), start, end, { fmt: ms })
    ];
    chart('chart-timeline', {
      title: 'Latency per ' + w + ' window', x: timeAxis(),
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs }, series: latency, spans: spans,
      lookup: spanLookup(start, end, latency),
      hrefs: t.merged ? [
        { name: 'run p99 ' + fmtMs(t.merged[2]), y: t.merged[2], color: COLORS.p99, dash: '6 4' },
        { name: 'run p95 ' + fmtMs(t.merged[1]), y: t.merged[1], color: COLORS.p95, dash: '6 4' },
        { name: 'run p50 ' + fmtMs(t.merged[0]), y: t.merged[0], color: COLORS.p50, dash: '6 4' }
      ] : []
    }, group);
    var rate = [series('achieved', null, P.map(function (p) { return p.rate; }), start, end, { fmt: rps })];
    if (P.some(function (p) { return p.target > 0; })) {
      rate.push(series('target', null, P.map(function (p) { return p.target > 0 ? p.target : null; }), start, end, { dash: '5 4', fmt: rps }));
    }
    timeChart('chart-rate', 'Throughput per ' + w + ' window', { kind: 'lin', label: 'req/s', zero: true }, rate);
    var lagged = P.some(function (p) { return !!p.send_lag_ms; });
    var lagOf = function (k) { return P.map(function (p) { return p.send_lag_ms ? p.send_lag_ms[k] : null; }); };
    if (lagged) {
      timeChart('chart-sendlag', 'Send lag per ' + w + ' window: how late the generator sent', { kind: 'log', label: 'send lag (log)', fmt: fmtMs }, [
        series('send_lag', NAMES.send_lag + ' p99', lagOf('p99'), start, end, { width: 2.5, fmt: ms }),
        series('send_lag', NAMES.send_lag + ' max', lagOf('max'), start, end, { width: 1.2, dash: '2 2', fmt: ms })
      ]);
    } else { hide('chart-sendlag'); }
    var c = function (k) { return P.map(function (p) { return p[k]; }); };
    timeChart('chart-errors', 'Errors and dropped iterations per ' + w + ' window', { kind: 'lin', label: 'count', zero: true }, [
      series('errors', null, c('errors'), start, end, { fmt: count }),
      series('failed', null, c('failed'), start, end, { dash: '6 3', fmt: count }),
      series('dropped', null, c('dropped'), start, end, { dash: '2 3', fmt: count })
    ]);
    var classes = ['2xx', '3xx', '4xx', '5xx', '1xx'].filter(function (k) {
      return P.some(function (p) { return p.by_status && p.by_status[k] > 0; });
    });
    timeChart('chart-status', 'Responses by status class per ' + w + ' window', { kind: 'lin', label: 'responses', zero: true },
      classes.map(function (k) {
        return series('status_' + k, null, P.map(function (p) { return (p.by_status && p.by_status[k]) || 0; }), start, end, { fmt: count });
      }));
    timeChart('chart-vus', 'VUs per ' + w + ' window (highest of the window)', { kind: 'lin', label: 'VUs', zero: true }, [
      series('busy_vus', null, c('busy_vus'), start, end, { fmt: count }),
      series('vus', null, c('vus'), start, end, { dash: '5 3', fmt: count })
    ]);
    var bytes = function (v) { return v === null ? 'no data' : fmtBytes(v); };
    timeChart('chart-data', 'Data sent and received per ' + w + ' window', { kind: 'lin', label: 'bytes/s', zero: true, fmt: fmtBytes }, [
      series('data_received', null, c('bytes_in_rate'), start, end, { fmt: bytes }),
      series('data_sent', null, c('bytes_out_rate'), start, end, { dash: '5 3', fmt: bytes })
    ]);
    if (P.some(function (p) { return (p.checks_passed || 0) + (p.checks_failed || 0) > 0; })) {
      timeChart('chart-checks', 'Checks per ' + w + ' window', { kind: 'lin', label: 'checks', zero: true }, [
        series('checks_pass', null, P.map(function (p) { return p.checks_passed || 0; }), start, end, { fmt: count }),
        series('checks_fail', null, P.map(function (p) { return p.checks_failed || 0; }), start, end, { fmt: count })
      ]);
    } else { hide('chart-checks'); }
    if (P.some(function (p) { return p.iterations > 0; })) {
      timeChart('chart-iterations', 'Iterations per second per ' + w + ' window', { kind: 'lin', label: 'iterations/s', zero: true }, [
        series('iterations', NAMES.iterations + ' per second', c('iteration_rate').map(function (v) { return v || 0; }), start, end,
          { fmt: function (v) { return fmtExact(v, 'iterations/s'); } })
      ]);
      var it = function (k) { return P.map(function (p) { return p.iteration_ms ? p.iteration_ms[k] : null; }); };
      timeChart('chart-iteration-duration', 'Iteration duration per ' + w + ' window', { kind: 'log', label: 'iteration duration (log)', fmt: fmtMs }, [
        series('max', NAMES.max + ' per window', it('max'), start, end, { width: 1.2, dash: '2 2', fmt: ms }),
        series('p99', NAMES.p99 + ' per window', it('p99'), start, end, { width: 3.5, fmt: ms }),
        series('p95', NAMES.p95 + ' per window', it('p95'), start, end, { width: 2.5, fmt: ms }),
        series('p50', NAMES.p50 + ' per window', it('p50'), start, end, { fmt: ms })
      ]);
    } else { hide('chart-iterations'); hide('chart-iteration-duration'); }
    if (P.some(function (p) { return !!p.phases_ms; })) {
      var phases = ['blocked', 'connecting', 'tls_handshaking', 'sending', 'waiting', 'receiving'];
      var ph = phases.map(function (k) {
        return series('phase_' + k, NAMES['phase_' + k] + ' p95', P.map(function (p) { return p.phases_ms ? p.phases_ms[k].p95 : null; }), start, end, { fmt: ms });
      });
      // The hover gives each phase's every percentile, not only the p95 drawn.
      var all = function (l) {
        return l ? 'p50 ' + fmtExact(l.p50) + ', p95 ' + fmtExact(l.p95) + ', p99 ' + fmtExact(l.p99) + ', max ' + fmtExact(l.max) + ' ms' : 'no data';
      };
      var rows = phases.map(function (k, i) {
        return { name: NAMES['phase_' + k], color: ph[i].color, fmt: all, vals: P.map(function (p) { return p.phases_ms ? p.phases_ms[k] : null; }) };
      });
      chart('chart-phases', { title: 'Request phases per ' + w + ' window: p95 of each', x: timeAxis(),
        y: { kind: 'log', label: 'phase (log)', fmt: fmtMs }, series: ph, spans: spans, lookup: spanLookup(start, end, rows) }, group);
    } else { hide('chart-phases'); }
    var scs = t.scenarios || [];
    if (scs.length > 1) {
      var per = function (f) {
        return scs.map(function (sc, i) {
          var s = series('', sc.scenario, sc.points.map(f), start.slice(0, sc.points.length), end.slice(0, sc.points.length), {});
          s.color = COLORS[DISTINCT[i % DISTINCT.length]];
          return s;
        });
      };
      var sl = per(function (p) { return p.requests > 0 ? p.latency_ms.p99 : null; });
      sl.forEach(function (s) { s.fmt = ms; });
      timeChart('chart-scenario-latency', 'p99 latency by scenario per ' + w + ' window', { kind: 'log', label: 'latency (log)', fmt: fmtMs }, sl);
      var sr = per(function (p) { return p.rate; });
      sr.forEach(function (s) { s.fmt = rps; });
      timeChart('chart-scenario-rate', 'Throughput by scenario per ' + w + ' window', { kind: 'lin', label: 'req/s', zero: true }, sr);
    } else { hide('chart-scenario-latency'); hide('chart-scenario-rate'); }
  }

  function hide(id) { var f = document.getElementById(id); if (f) { f.hidden = true; } }

  // nines: x = 1/(1-q) on a log axis, so 90 %, 99 %, 99.9 % are equally spaced.
  // The 100 % point (the max) has no finite x: it is drawn one decade past the last.
  function drawDistributions(ds) {
    var maxX = 10;
    ds.forEach(function (d) { d.pct.forEach(function (p) { if (p < 100) { maxX = Math.max(maxX, 100 / (100 - p)); } }); });
    var last = Math.ceil(Math.log10(maxX) + 1e-9) + 1, ticksX = [];
    for (var e = 0; e < last; e++) {
      ticksX.push({ v: Math.pow(10, e), label: e === 0 ? '0%' : (100 - Math.pow(10, 2 - e)).toFixed(Math.max(0, e - 2)) + '%' });
    }
    ticksX.push({ v: Math.pow(10, last), label: 'max' });
    var series = ds.map(function (d, i) {
      return { name: d.label, color: COLORS[DISTINCT[i % DISTINCT.length]], dash: /corrected/.test(d.label) ? '7 4' : '',
        markers: d.pct.length <= 80,
        pts: d.pct.map(function (p, j) {
          return [p >= 100 ? Math.pow(10, last) : 100 / (100 - p), d.ms[j], p >= 100 ? 'max' : 'p' + +p.toPrecision(6)];
        }) };
    });
    chart('chart-distribution', {
      title: 'Latency by percentile',
      x: { kind: 'log', label: 'percentile', ticks: ticksX, range: [1, Math.pow(10, last)] },
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs, exact: function (v) { return fmtExact(v, 'ms'); } },
      series: series
    });
  }

  function drawCurve(c) {
    var marks = [
      { x: c.last_healthy, label: 'last healthy', color: COLORS.achieved },
      { x: c.first_unhealthy, label: 'first unhealthy', color: COLORS.p99 },
      { x: c.collapse_at, label: 'collapse', color: COLORS.collapse }
    ];
    var off = function (vals) { return c.offered.map(function (o, i) { return [o, vals[i], fmtExact(o) + ' req/s offered']; }); };
    chart('chart-throughput', {
      title: 'Achieved against offered rate',
      x: { kind: 'lin', label: 'offered rate (req/s)', point: true },
      y: { kind: 'lin', label: 'req/s', zero: true, exact: function (v) { return fmtExact(v, 'req/s'); } },
      series: [
        { key: 'target', name: 'offered (y = x)', color: COLORS.target, dash: '4 4', pts: off(c.offered) },
        { key: 'achieved', name: NAMES.achieved, color: COLORS.achieved, markers: true, pts: off(c.rate) }
      ],
      vrefs: marks
    });
    chart('chart-curve', {
      title: 'Latency against offered rate',
      x: { kind: 'lin', label: 'offered rate (req/s)', point: true },
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs, exact: function (v) { return fmtExact(v, 'ms'); } },
      series: [
        { key: 'p99', name: NAMES.p99, color: COLORS.p99, width: 5, markers: true, pts: off(c.p99) },
        { key: 'p95', name: NAMES.p95, color: COLORS.p95, width: 3.5, markers: true, pts: off(c.p95) },
        { key: 'p50', name: NAMES.p50, color: COLORS.p50, markers: true, pts: off(c.p50) }
      ],
      vrefs: marks
    });
  }

  // drawAll draws every chart data has; called again (the live dashboard)
  // it redraws in place and keeps the zoom. Charts without data are hidden.
  // It returns how many charts it drew.
  var group = timeGroup();
  function drawAll(data) {
    usePalette(data.palette || {});
    var drawn = 0;
    function attempt(ids, ok, draw) {
      ids.forEach(function (id) { var fig = document.getElementById(id); if (fig && !ok) { fig.hidden = true; } });
      if (!ok) { return; }
      try { draw(); drawn += ids.length; } catch (e) { fail(ids[0] + ': ' + e.message); }
    }
    var tp = data.time && data.time.points, end = tp && tp.length ? tp[tp.length - 1].end_s : 0;
    group.full = [0, end > 0 ? end : 1];
    if (group.range && group.range[1] > group.full[1]) { group.range = null; }
    var timeIds = ['chart-timeline', 'chart-rate', 'chart-sendlag', 'chart-errors', 'chart-status', 'chart-checks', 'chart-iterations', 'chart-iteration-duration', 'chart-phases', 'chart-vus', 'chart-data',
      'chart-scenario-latency', 'chart-scenario-rate'];
    attempt(timeIds, !!(tp && tp.length), function () {
      drawTime(data.time, group);
      drawn -= timeIds.filter(function (id) { var f = document.getElementById(id); return !f || f.hidden; }).length;
    });
    attempt(['chart-distribution'], !!(data.distributions && data.distributions.length), function () { drawDistributions(data.distributions); });
    attempt(['chart-throughput', 'chart-curve'], !!(data.curve && data.curve.offered.length), function () { drawCurve(data.curve); });
    return drawn;
  }

  window.kneeCharts = { drawAll: drawAll, fail: fail, fmtMs: fmtMs, group: group };
  var dataBlock = document.getElementById('knee-data');
  if (!dataBlock) { return; } // the live dashboard feeds drawAll itself
  try {
    body.setAttribute('data-charts-drawn', String(drawAll(JSON.parse(dataBlock.textContent))));
  } catch (e) {
    fail('chart data: ' + e.message);
    body.setAttribute('data-charts-drawn', '0');
  }
})();
