// __VU, __ITER and k6/execution agree; only VU 1 sends requests, the others think longer.
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';

export const options = {
  scenarios: { perVU: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } },
};

export default function () {
  check(exec, {
    'vu id matches': (e) => e.vu.idInTest === __VU,
    'iteration matches': (e) => e.vu.iterationInScenario === __ITER,
    'scenario name': (e) => e.scenario.name === 'perVU',
    'executor name': (e) => e.scenario.executor === 'per-vu-iterations',
    'iteration below 2': () => __ITER < 2,
  });
  if (__VU === 1) {
    http.get(`${__ENV.BASE_URL}/status/200?iter=${exec.scenario.iterationInTest}`);
  } else {
    sleep(0.2);
  }
}
