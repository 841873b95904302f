// Two requests in flight at once with http.asyncRequest.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2 };

export default async function () {
  const [doc, created] = await Promise.all([
    http.asyncRequest('GET', `${__ENV.BASE_URL}/json`),
    http.asyncRequest('GET', `${__ENV.BASE_URL}/status/201`),
  ]);
  check(doc, { 'document read': (r) => r.json('user.name') === 'ada' });
  check(created, { 'created': (r) => r.status === 201 });
}
