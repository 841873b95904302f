// A check reads a field the reply does not have, so its function throws.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 3 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/json`);
  check(res, {
    'status 200': (r) => r.status === 200,
    'first item price': (r) => r.json().items[0].price === 2.5,
    'discount code': (r) => r.json().discount.code === 'SPRING',
    'never evaluated': () => true,
  });
  http.get(`${__ENV.BASE_URL}/status/200`);
}
