// A link followed from the page: knee does not implement clickLink.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 1 };

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/status/200`);
  const sent = page.clickLink({ selector: 'a' });
  check(sent, { 'followed': (r) => r.status === 200 });
}
