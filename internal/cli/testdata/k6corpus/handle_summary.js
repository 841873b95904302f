// handleSummary writes its own JSON report from the end-of-test data.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 2, iterations: 4, thresholds: { http_reqs: ['count==8'] } };

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  const r = http.get(`${__ENV.BASE_URL}/status/201`);
  check(r, { 'created': (res) => res.status === 201, 'is 200': (res) => res.status === 200 });
}

export function handleSummary(data) {
  const report = {
    requests: data.metrics.http_reqs.values.count,
    iterations: data.metrics.iterations.values.count,
    checksPassed: data.metrics.checks.values.passes,
    checksFailed: data.metrics.checks.values.fails,
    thresholdOK: data.metrics.http_reqs.thresholds['count==8'].ok,
  };
  return { [__ENV.SUMMARY_FILE]: JSON.stringify(report) };
}
