// A user journey split into groups, with thresholds on one group's checks.
import http from 'k6/http';
import { check, group } from 'k6';

export const options = {
  vus: 2,
  iterations: 4,
  thresholds: {
    'checks{group:::login}': ['rate==1'],
    'checks{group:::shop::cart}': ['rate==0'],
    'http_reqs{group:::shop}': ['count==4'],
  },
};

const base = __ENV.BASE_URL;

export default function () {
  group('login', () => {
    const r = http.post(`${base}/form`, { user: 'ada', password: 'secret' });
    check(r, { 'logged in': (res) => res.json('user') === 'ada' });
  });
  group('shop', () => {
    http.get(`${base}/json`);
    group('cart', () => {
      const r = http.get(`${base}/status/409`);
      check(r, { 'added to cart': (res) => res.status === 201 });
    });
  });
}
