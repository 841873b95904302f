// Every third iteration fails after its request: the exception ends the iteration.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 6 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/json`);
  check(res, { 'got json': (r) => r.status === 200 });
  if (__ITER % 3 === 2) {
    throw new Error(`item ${__ITER} is out of stock`);
  }
  check(res, { 'reached the end': () => true });
}
