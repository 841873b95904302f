// setup() logs in once; every iteration and teardown() use its token.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 2, iterations: 4 };

const base = __ENV.BASE_URL;

export function setup() {
  const res = http.post(`${base}/form`, { user: 'setup-user' });
  return { token: `tok-${res.json('user')}`, pages: [200, 204] };
}

export default function (data) {
  check(data, { 'token reached the VU': (d) => d.token === 'tok-setup-user' });
  const res = http.get(`${base}/status/${data.pages[__ITER % 2]}`);
  check(res, { 'page as planned': (r) => r.status === data.pages[__ITER % 2] });
}

export function teardown(data) {
  const res = http.get(`${base}/status/200?token=${data.token}`);
  check(res, { 'logged out': (r) => r.status === 200 });
}
