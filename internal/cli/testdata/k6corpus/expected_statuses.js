// Which statuses count as failed requests: a global callback and one per request.
import http from 'k6/http';
import { check } from 'k6';

http.setResponseCallback(http.expectedStatuses(200, 404));

export const options = {
  vus: 1,
  iterations: 3,
  thresholds: {
    http_req_failed: ['rate<0.4'],
    'http_reqs{expected_response:false}': ['count==3'],
  },
};

const base = __ENV.BASE_URL;
const serverErrorsExpected = http.expectedStatuses({ min: 500, max: 599 });

export default function () {
  http.get(`${base}/status/404`);
  const r = http.get(`${base}/status/500`);
  check(r, { 'server error seen': (res) => res.status === 500 });
  http.get(`${base}/status/503`, { responseCallback: serverErrorsExpected });
}
