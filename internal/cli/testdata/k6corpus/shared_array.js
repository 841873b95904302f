// Test data from a JSON file, shared between VUs, one row per iteration of the test.
import http from 'k6/http';
import { check } from 'k6';
import { SharedArray } from 'k6/data';
import exec from 'k6/execution';

const users = new SharedArray('users', () => JSON.parse(open('./data/users.json')));

export const options = {
  scenarios: { readers: { executor: 'shared-iterations', vus: 2, iterations: 6 } },
  thresholds: {
    'http_reqs{plan:pro}': ['count==2'],
    'http_reqs{plan:free}': ['count==4'],
  },
};

export default function () {
  const u = users[exec.scenario.iterationInTest % users.length];
  const res = http.get(`${__ENV.BASE_URL}/echo?user=${u.name}`, { tags: { plan: u.plan } });
  check(res, { 'user in query': (r) => r.json('query.user') === u.name });
  check(users, { 'three users': (a) => a.length === 3 });
}
