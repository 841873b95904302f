// The run's end cuts a request short (gracefulStop 0s): k6 pushes no sample
// once the VU's context is done, so of the first iteration only its fast
// request counts, and the interrupted iteration is no iteration.
import http from 'k6/http';

export const options = {
  scenarios: {
    cut: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s' },
  },
  thresholds: { http_reqs: ['count==1'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  http.get(`${__ENV.BASE_URL}/slow?ms=5000`);
}
