// A page behind HTTP digest auth, with the right and a wrong password.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 2,
  thresholds: {
    'http_reqs{status:401}': ['count==6'],
    'http_req_failed': ['rate==0.25'],
    'http_reqs{expected_response:false}': ['count==2'],
  },
};

export default function () {
  const ok = http.get(`${__ENV.BASE_URL.replace('http://', 'http://ada:secret@')}/digest`, { auth: 'digest' });
  check(ok, { 'authenticated': (r) => r.status === 200 && r.body === 'hello ada' });
  const bad = http.get(`${__ENV.BASE_URL.replace('http://', 'http://ada:wrong@')}/digest`, { auth: 'digest' });
  check(bad, { 'wrong password refused': (r) => r.status === 401 });
}
