// The script stops the whole test when it sees an answer it cannot go on from.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';

export const options = { vus: 1, iterations: 10 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/status/${__ITER === 2 ? 503 : 200}`);
  check(res, { 'service up': (r) => r.status === 200 });
  if (res.status === 503) {
    exec.test.abort('service unavailable');
  }
  check(res, { 'after the guard': () => true });
}
