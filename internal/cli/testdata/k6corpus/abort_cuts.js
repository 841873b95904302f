// One VU stops the test while the other sleeps: k6 cancels the test run at
// once (no gracefulStop), so the sleeper neither sends nor counts; the
// aborting iteration returned before the cancel and counts whole.
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';

export const options = {
  scenarios: { pair: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } },
};

export default function () {
  if (exec.vu.idInTest === 1) {
    sleep(0.3);
    http.get(`${__ENV.BASE_URL}/status/200`);
    exec.test.abort('enough');
  }
  sleep(3);
  http.get(`${__ENV.BASE_URL}/status/200`);
}
