// Links followed from a page: the first link, a named one with params,
// and one that is not there.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 2,
  thresholds: {
    'http_reqs{name:next}': ['count==2'],
  },
};

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/page`);
  const first = page.clickLink();
  const named = page.clickLink({ selector: 'a.next', params: { tags: { name: 'next' } } });
  let missing = '';
  try {
    page.clickLink({ selector: 'a.prev' });
  } catch (e) {
    missing = String(e);
  }
  check(first, { 'followed': (r) => r.status === 200 && r.body === 'status 200' });
  check(named, { 'resolved': (r) => r.url === `${__ENV.BASE_URL}/status/200` });
  check(missing, { 'no prev': (m) => m.includes(`no element found for selector 'a.prev' in response '${__ENV.BASE_URL}/page'`) });
}
