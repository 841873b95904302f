// Two scenarios, each with its own function, VUs and iterations.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    browse: { executor: 'shared-iterations', vus: 2, iterations: 4, exec: 'browse' },
    buy: { executor: 'shared-iterations', vus: 1, iterations: 2, exec: 'buy' },
  },
  thresholds: {
    'http_reqs{scenario:browse}': ['count==4'],
    'http_reqs{scenario:buy}': ['count==2'],
  },
};

export function browse() {
  http.get(`${__ENV.BASE_URL}/json`);
}

export function buy() {
  const r = http.post(`${__ENV.BASE_URL}/form`, { item: 'book' });
  check(r, { 'bought': (res) => res.json('item') === 'book' });
}
