// Redirect chains: followed to the end, cut short by a request's limit, or by the global one.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2, maxRedirects: 4 };

const base = __ENV.BASE_URL;

export default function () {
  const full = http.get(`${base}/redirect/3`);
  check(full, {
    'chain ends in 200': (r) => r.status === 200,
    'final url is the last hop': (r) => r.url.endsWith('/redirect/0'),
  });
  const cut = http.get(`${base}/redirect/3`, { redirects: 1 });
  check(cut, {
    'cut chain stops at a 302': (r) => r.status === 302,
    'cut chain ends at its second hop': (r) => r.url.endsWith('/redirect/2'),
  });
  const long = http.get(`${base}/redirect/6`);
  check(long, { 'long chain reaches the end': (r) => r.status === 200 });
}
