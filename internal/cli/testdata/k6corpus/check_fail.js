// A failed check ends the iteration with fail(): the next step is skipped.
import http from 'k6/http';
import { check, fail } from 'k6';

export const options = { vus: 1, iterations: 4 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/status/${__ITER % 2 === 1 ? 500 : 200}`);
  if (!check(res, { 'login answered 200': (r) => r.status === 200 })) {
    fail(`login failed with ${res.status}`);
  }
  http.get(`${__ENV.BASE_URL}/json`);
}
