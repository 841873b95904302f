// A helper library imported by URL, run offline from the module cache.
import http from 'k6/http';
import { check } from 'k6';
import { pick, between } from 'https://modules.knee.test/pick/1.0.0/index.js';

export const options = { vus: 1, iterations: 3 };

const pages = [200, 201, 204];

export default function () {
  const code = pick(pages, __ITER);
  const res = http.get(`${__ENV.BASE_URL}/status/${code}`);
  check(res, {
    'status picked': (r) => r.status === code,
    'a success': () => between(res.status, 200, 299),
  });
}
