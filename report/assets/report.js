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
  var COLORS = { p50: '#2b8a3e', p95: '#e67700', p99: '#c92a2a', rate: '#1c5fbd', offered: '#868e96' };
  var PALETTE = ['#1c5fbd', '#c92a2a', '#2b8a3e', '#e67700', '#7048e8', '#0b7285', '#a61e4d'];

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
      return { kind: kind, lo: lo, hi: hi, px: function (v) { return p0 + (Math.log10(v) - lo) / (hi - lo) * (p1 - p0); } };
    }
    if (hi - lo < 1e-12) { hi = lo + 1; }
    return { kind: kind, lo: lo, hi: hi, px: function (v) { return p0 + (v - lo) / (hi - lo) * (p1 - p0); } };
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

  function extent(series, pick, positive) {
    var lo = Infinity, hi = -Infinity;
    series.forEach(function (s) {
      s.pts.forEach(function (p) {
        var v = p[pick];
        if (v === null || !isFinite(v) || (positive && v <= 0)) { return; }
        lo = Math.min(lo, v); hi = Math.max(hi, v);
      });
    });
    return [lo, hi];
  }

  // chart draws one SVG line chart from spec and appends it to the figure with id.
  function chart(id, spec) {
    var fig = document.getElementById(id);
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': spec.title }, fig);
    el('text', { x: M.left, y: 18, 'class': 'title' }, svg, spec.title);
    var top = M.top + 18 * (legend(svg, spec.series.concat(spec.hrefs || [])) - 1);
    var all = spec.series.concat((spec.hrefs || []).map(function (r) { return { pts: [[null, r.y]] }; }));
    var ylog = spec.y.kind === 'log';
    var ye = extent(all, 1, ylog), xe = spec.x.range || extent(spec.series, 0, spec.x.kind === 'log');
    if (spec.y.zero) { ye[0] = 0; }
    if (!isFinite(ye[0])) { ye = [ylog ? 0.1 : 0, 1]; }
    if (ylog) { ye = niceLog(ye[0] / 1.15, ye[1] * 1.15); } else { ye[1] *= 1.08; }
    if (!spec.x.range && spec.x.kind === 'lin') { var pad = (xe[1] - xe[0]) * 0.04; xe = [xe[0] - pad, xe[1] + pad]; }
    var x = axis(spec.x.kind, xe[0], xe[1], M.left, W - M.right);
    var y = axis(spec.y.kind, ye[0], ye[1], H - M.bottom, top);
    var fy = spec.y.fmt || fmtNum, fx = spec.x.fmt || fmtNum;
    ticks(y).forEach(function (v) {
      el('line', { x1: M.left, x2: W - M.right, y1: y.px(v), y2: y.px(v), 'class': 'grid' }, svg);
      el('text', { x: M.left - 6, y: y.px(v) + 4, 'text-anchor': 'end', 'class': 'tick' }, svg, fy(v));
    });
    (spec.x.ticks || ticks(x).map(function (v) { return { v: v, label: fx(v) }; })).forEach(function (t) {
      el('line', { x1: x.px(t.v), x2: x.px(t.v), y1: top, y2: H - M.bottom, 'class': 'grid' }, svg);
      el('text', { x: x.px(t.v), y: H - M.bottom + 16, 'text-anchor': 'middle', 'class': 'tick' }, svg, t.label);
    });
    el('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom, 'class': 'axis' }, svg);
    el('line', { x1: M.left, x2: M.left, y1: top, y2: H - M.bottom, 'class': 'axis' }, svg);
    el('text', { x: (M.left + W - M.right) / 2, y: H - 10, 'text-anchor': 'middle' }, svg, spec.x.label);
    el('text', { x: 14, y: (top + H - M.bottom) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (top + H - M.bottom) / 2 + ')' }, svg, spec.y.label);
    (spec.vrefs || []).forEach(function (r) {
      if (!(r.x > 0)) { return; }
      el('line', { x1: x.px(r.x), x2: x.px(r.x), y1: top, y2: H - M.bottom, stroke: r.color, 'stroke-dasharray': '2 3', 'stroke-width': 1.5 }, svg);
      var right = x.px(r.x) > (M.left + W - M.right) / 2; // label on the side with room
      el('text', { x: x.px(r.x) + (right ? -4 : 4), y: top + 12, 'text-anchor': right ? 'end' : 'start',
        style: 'fill:' + r.color }, svg, r.label);
    });
    (spec.hrefs || []).forEach(function (r) {
      if (ylog && !(r.y > 0)) { return; }
      el('line', { x1: M.left, x2: W - M.right, y1: y.px(r.y), y2: y.px(r.y), stroke: r.color, 'stroke-dasharray': '6 4', 'stroke-width': 1.2, opacity: 0.8 }, svg);
    });
    spec.series.forEach(function (s) { drawSeries(svg, s, x, y, fy, fx, ylog); });
    return svg;
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
    if (d) { el('path', { d: d, fill: 'none', stroke: s.color, 'stroke-width': s.width || 2, 'stroke-dasharray': s.dash || '' }, svg); }
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

  // timeline: each window drawn flat over its span (a window has one p99, not a slope).
  function drawTimeline(t) {
    function steps(vals) {
      var pts = [];
      vals.forEach(function (v, i) { pts.push([t.start_s[i], v]); pts.push([t.end_s[i], v]); pts.push([t.end_s[i], null]); });
      return pts;
    }
    var w = t.window_s + ' s';
    chart('chart-timeline', {
      title: 'Latency per ' + w + ' window',
      x: { kind: 'lin', label: 'seconds since start', range: [0, t.end_s[t.end_s.length - 1]] },
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs },
      series: [
        { name: 'p99 per window', color: COLORS.p99, width: 5, pts: steps(t.p99) },
        { name: 'p95 per window', color: COLORS.p95, width: 3.5, pts: steps(t.p95) },
        { name: 'p50 per window', color: COLORS.p50, pts: steps(t.p50) }
      ],
      hrefs: [
        { name: 'run p99 ' + fmtMs(t.merged[2]), y: t.merged[2], color: COLORS.p99, dash: '6 4' },
        { name: 'run p95 ' + fmtMs(t.merged[1]), y: t.merged[1], color: COLORS.p95, dash: '6 4' },
        { name: 'run p50 ' + fmtMs(t.merged[0]), y: t.merged[0], color: COLORS.p50, dash: '6 4' }
      ]
    });
  }

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
      return { name: d.label, color: PALETTE[i % PALETTE.length], dash: /corrected/.test(d.label) ? '7 4' : '',
        markers: d.pct.length <= 80,
        pts: d.pct.map(function (p, j) {
          return [p >= 100 ? Math.pow(10, last) : 100 / (100 - p), d.ms[j], p >= 100 ? 'max' : 'p' + +p.toPrecision(6)];
        }) };
    });
    chart('chart-distribution', {
      title: 'Latency by percentile',
      x: { kind: 'log', label: 'percentile', ticks: ticksX, range: [1, Math.pow(10, last)] },
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs },
      series: series
    });
  }

  function drawCurve(c) {
    var marks = [
      { x: c.last_healthy, label: 'last healthy', color: COLORS.p50 },
      { x: c.first_unhealthy, label: 'first unhealthy', color: COLORS.p99 },
      { x: c.collapse_at, label: 'collapse', color: '#000' }
    ];
    var off = function (vals) { return c.offered.map(function (o, i) { return [o, vals[i], fmtNum(o) + ' req/s offered']; }); };
    chart('chart-throughput', {
      title: 'Achieved against offered rate',
      x: { kind: 'lin', label: 'offered rate (req/s)' },
      y: { kind: 'lin', label: 'req/s', zero: true },
      series: [
        { name: 'offered (ideal)', color: COLORS.offered, dash: '4 4', pts: off(c.offered) },
        { name: 'achieved', color: COLORS.rate, markers: true, pts: off(c.rate) }
      ],
      vrefs: marks
    });
    chart('chart-curve', {
      title: 'Latency against offered rate',
      x: { kind: 'lin', label: 'offered rate (req/s)' },
      y: { kind: 'log', label: 'latency (log)', fmt: fmtMs },
      series: [
        { name: 'p99', color: COLORS.p99, width: 5, markers: true, pts: off(c.p99) },
        { name: 'p95', color: COLORS.p95, width: 3.5, markers: true, pts: off(c.p95) },
        { name: 'p50', color: COLORS.p50, markers: true, pts: off(c.p50) }
      ],
      vrefs: marks
    });
  }

  var drawn = 0;
  function attempt(id, ok, draw) {
    if (!ok) { var fig = document.getElementById(id); if (fig) { fig.remove(); } return; }
    try { draw(); drawn += (id === 'chart-throughput') ? 2 : 1; } catch (e) { fail(id + ': ' + e.message); }
  }
  try {
    var data = JSON.parse(document.getElementById('knee-data').textContent);
    attempt('chart-timeline', !!data.timeline, function () { drawTimeline(data.timeline); });
    attempt('chart-distribution', !!(data.distributions && data.distributions.length), function () { drawDistributions(data.distributions); });
    attempt('chart-throughput', !!data.curve, function () { drawCurve(data.curve); });
    if (!data.curve) { attempt('chart-curve', false); }
  } catch (e) {
    fail('chart data: ' + e.message);
  }
  body.setAttribute('data-charts-drawn', String(drawn));
})();
