// Cookies: set by the server, set by the script, sent per request; the jar starts empty each iteration.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2 };

const base = __ENV.BASE_URL;

export default function () {
  const before = http.get(`${base}/cookies`);
  check(before, { 'jar empty at the start': (r) => Object.keys(r.json()).length === 0 });

  const set = http.get(`${base}/cookies/set?session=s${__ITER}`);
  check(set, { 'server set session': (r) => r.cookies.session && r.cookies.session[0].value === `s${__ITER}` });

  const jar = http.cookieJar();
  jar.set(base, 'theme', 'dark');
  const after = http.get(`${base}/cookies`, { cookies: { lang: 'en' } });
  check(after, {
    'session sent back': (r) => r.json('session') === `s${__ITER}`,
    'jar cookie sent': (r) => r.json('theme') === 'dark',
    'request cookie sent': (r) => r.json('lang') === 'en',
  });
}
