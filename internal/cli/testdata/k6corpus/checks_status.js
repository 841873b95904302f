// Status checks: one page that exists and one that does not, per iteration.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 2, iterations: 6 };

const base = __ENV.BASE_URL;

export default function () {
  const home = http.get(`${base}/status/200`);
  check(home, {
    'home is 200': (r) => r.status === 200,
    'home body names its status': (r) => r.body.includes('200'),
  });
  const missing = http.get(`${base}/status/404`);
  check(missing, { 'missing page is 200': (r) => r.status === 200 });
}
