// Posting forms and JSON bodies, and other verbs.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 3 };

const base = __ENV.BASE_URL;

export default function () {
  const form = http.post(`${base}/form`, { user: `u${__ITER}`, city: 'Lyon' });
  check(form, {
    'form user echoed': (r) => r.json('user') === `u${__ITER}`,
    'form city echoed': (r) => r.json('city') === 'Lyon',
  });
  const body = JSON.stringify({ qty: __ITER + 1 });
  const put = http.put(`${base}/echo`, body, { headers: { 'Content-Type': 'application/json' } });
  check(put, {
    'put seen as PUT': (r) => r.json('method') === 'PUT',
    'json body arrived': (r) => JSON.parse(r.json('body')).qty === __ITER + 1,
  });
  const del = http.del(`${base}/echo`);
  check(del, { 'delete seen as DELETE': (r) => r.json('method') === 'DELETE' });
}
