// A Trend whose 95th percentile crosses its threshold: the run fails.
import http from 'k6/http';
import { Trend, Counter } from 'k6/metrics';

const queue = new Trend('queue_depth');
const retries = new Counter('retries');

export const options = {
  vus: 1,
  iterations: 4,
  thresholds: {
    queue_depth: ['p(95)<20'],
    retries: ['count<1'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  queue.add(__ITER * 10);
}
