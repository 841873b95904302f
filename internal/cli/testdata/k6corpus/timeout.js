// A slow endpoint under a request timeout: the request fails, the iteration goes on.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 2,
  thresholds: { http_req_failed: ['rate==0.5'] },
};

export default function () {
  const slow = http.get(`${__ENV.BASE_URL}/slow?ms=2000`, { timeout: '150ms' });
  check(slow, {
    'no status after a timeout': (r) => r.status === 0,
    'timeout error code': (r) => r.error_code === 1050,
  });
  http.get(`${__ENV.BASE_URL}/status/200`);
}
