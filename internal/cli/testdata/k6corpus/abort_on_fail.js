// Every request gets a 500, so the threshold fails from the first
// iteration; k6 judges it every 2 s and then cuts the run at once.
import http from 'k6/http';
import { sleep } from 'k6';
import { Rate } from 'k6/metrics';

const serverErrors = new Rate('server_errors');

export const options = {
  vus: 1,
  iterations: 40,
  thresholds: {
    server_errors: [{ threshold: 'rate<0.5', abortOnFail: true }],
  },
};

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/status/500`);
  serverErrors.add(res.status >= 500);
  sleep(0.45);
}

export function teardown() {
  http.get(`${__ENV.BASE_URL}/status/200`);
}
