// Reading a JSON API: the whole document and gjson paths into it.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 3,
  thresholds: { checks: ['rate>0.7'] },
};

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/json`);
  const doc = res.json();
  check(res, {
    'user id is 7': () => doc.user.id === 7,
    'name by path': (r) => r.json('user.name') === 'ada',
    'two items': (r) => r.json('items.#') === 2,
    'three roles': (r) => r.json('user.roles.#') === 3,
  });
}
