// knee live dashboard: every server-sent event is a snapshot of the run
// directory; the charts are the report's (window.kneeCharts), redrawn in place.
(function () {
  'use strict';
  var K = window.kneeCharts, body = document.body, updates = 0, finished = false;
  function text(id, v) { document.getElementById(id).textContent = v; }
  function ms(v) { return v === null || v === undefined ? 'no requests' : K.fmtMs(v); }
  function classes(m) {
    var parts = [];
    for (var k in (m || {})) { parts.push(k + ' ' + m[k]); }
    return parts.length ? ' (' + parts.sort().join(', ') + ')' : '';
  }
  function show(s) {
    var st = s.status;
    text('run-dir', st.run_dir);
    text('elapsed', st.elapsed_s.toFixed(1) + ' s, ' + st.intervals + ' intervals');
    var scs = st.scenarios || [];
    if (scs.length > 1) {
      // Scenarios of different models and targets: each on its own line,
      // only the counts add up.
      text('rate', st.rate.toFixed(1) + ' req/s achieved, all scenarios (each against its own target below)');
      text('latency', 'per scenario, below');
    } else {
      text('rate', st.rate.toFixed(1) + ' req/s achieved' + (st.target ? ' of ' + st.target.toFixed(1) + ' req/s offered' : ''));
      text('latency', 'p50 ' + ms(st.p50_ms) + ', p95 ' + ms(st.p95_ms) + ', p99 ' + ms(st.p99_ms));
    }
    var list = document.getElementById('scenarios');
    list.hidden = scs.length < 2;
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (scs.length > 1) {
      scs.forEach(function (sc) {
        var li = document.createElement('li');
        li.textContent = 'scenario ' + sc.name + ' · ' + sc.model + ' model · ' + sc.executor + ': ' +
          sc.rate.toFixed(1) + ' req/s' + (sc.target ? ' of ' + sc.target.toFixed(1) + ' req/s offered' : '') +
          '; p50 ' + ms(sc.p50_ms) + ', p95 ' + ms(sc.p95_ms) + ', p99 ' + ms(sc.p99_ms) +
          '; ' + sc.errors + ' errors of ' + sc.requests + ' requests' +
          (sc.model === 'closed' ? '' : '; dropped ' + sc.dropped);
        list.appendChild(li);
      });
    }
    text('errors', st.errors + ' of ' + st.requests + ' requests' + classes(st.errors_by_class));
    text('dropped', st.model === 'closed' ? 'not applicable (closed model)' : String(st.dropped));
    text('vus', st.busy_vus + ' busy of ' + st.vus + ' allocated');
    text('sendlag', st.send_lag_p99_ms === null || st.send_lag_p99_ms === undefined ? 'not measured (closed model or no request)' : K.fmtMs(st.send_lag_p99_ms));
    text('steps', st.steps ? String(st.steps) : 'not a stepped run (or no step complete yet)');
    var drawn = K.drawAll(s.charts);
    var fired = s.co.signals.filter(function (x) { return x.fired; });
    if (fired.length) {
      document.getElementById('co-warning').hidden = false;
      text('co-verdict', 'Verdict so far: ' + s.co.verdict + '.');
      var ul = document.getElementById('co-evidence');
      while (ul.firstChild) { ul.removeChild(ul.firstChild); }
      fired.forEach(function (x) {
        var li = document.createElement('li');
        li.textContent = x.name + ': ' + x.evidence;
        ul.appendChild(li);
      });
      body.setAttribute('data-co', fired.map(function (x) { return x.name; }).join(','));
    }
    if (s.done) {
      finished = true;
      es.close();
      var d = document.getElementById('done');
      d.hidden = false;
      d.textContent = 'Run finished. Run directory: ' + s.done.run_dir + (s.done.report ? '. Report: ' + s.done.report : '');
      body.setAttribute('data-done', s.done.report || s.done.run_dir);
      if (s.run) { final(s.run); }
    }
    updates++;
    body.setAttribute('data-updates', String(updates));
    body.setAttribute('data-charts-drawn', String(drawn));
    body.setAttribute('data-points', String(s.charts.time ? s.charts.time.points.length : 0));
  }
  // final shows the whole run's summary once it has ended.
  function final(r) {
    var l = r.latency_ms;
    document.getElementById('final').hidden = false;
    text('final-requests', r.requests + ' in ' + r.duration_s.toFixed(1) + ' s (' + r.rate.toFixed(1) + ' req/s' +
      (r.target_rate ? ' of ' + r.target_rate.toFixed(1) + ' offered' : '') + ')');
    text('final-latency', 'p50 ' + K.fmtMs(l.p50) + ', p95 ' + K.fmtMs(l.p95) + ', p99 ' + K.fmtMs(l.p99) +
      ', p99.9 ' + K.fmtMs(l['p99.9']) + ', max ' + K.fmtMs(l.max));
    text('final-errors', r.errors + ' of ' + r.requests + classes(r.errors_by_class));
    text('final-dropped', r.model === 'closed' ? 'not applicable (closed model)' : String(r.dropped_iterations));
    text('final-sendlag', r.send_lag_ms ? 'p99 ' + K.fmtMs(r.send_lag_ms.p99) + ', max ' + K.fmtMs(r.send_lag_ms.max) : 'not measured (closed model)');
    text('final-slow', String(r.slower_than_1s));
  }
  var es = new EventSource('/events');
  es.onmessage = function (e) {
    try { show(JSON.parse(e.data)); } catch (err) { K.fail('event: ' + err.message); }
  };
  es.onerror = function () {
    if (!finished) { text('elapsed', 'connection to knee lost; retrying'); }
  };
})();
