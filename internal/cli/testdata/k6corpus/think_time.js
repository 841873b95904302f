// A page, then think time: every iteration lasts at least the sleep.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  vus: 2,
  iterations: 4,
  thresholds: {
    iteration_duration: ['min>=100'],
    http_req_duration: ['p(95)<5000'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  sleep(0.1 + (__ITER % 2) * 0.05);
}
