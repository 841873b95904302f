// The four custom metric types, each with a threshold that holds.
import http from 'k6/http';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

const pages = new Counter('pages_seen');
const lastIter = new Gauge('last_iteration');
const evenIter = new Rate('even_iterations');
const work = new Trend('work_units');

export const options = {
  vus: 1,
  iterations: 4,
  thresholds: {
    pages_seen: ['count==10'],
    last_iteration: ['value==3'],
    even_iterations: ['rate==0.5'],
    work_units: ['avg==15', 'max==30', 'med==15'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  pages.add(__ITER + 1);
  lastIter.add(__ITER);
  evenIter.add(__ITER % 2 === 0);
  work.add(__ITER * 10);
}
