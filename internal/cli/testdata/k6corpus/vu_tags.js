// The VU tags the login request through k6/execution, then drops the tag.
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  vus: 1,
  iterations: 3,
  thresholds: { 'http_reqs{step:login}': ['count==3'] },
};

export default function () {
  exec.vu.tags['step'] = 'login';
  http.post(`${__ENV.BASE_URL}/form`, { user: 'ada' });
  delete exec.vu.tags['step'];
  http.get(`${__ENV.BASE_URL}/json`);
}
