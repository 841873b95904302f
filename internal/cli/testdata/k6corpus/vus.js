// 3 VUs for 3 s, each iteration a page and 1.1 s of think time; a
// threshold on vus_max that fails, one on vus that passes.
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  vus: 3,
  duration: '3s',
  thresholds: {
    vus_max: ['value<2'],
    vus: ['value==3'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  sleep(1.1);
}
