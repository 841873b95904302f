// A login form and a search form filled in from the page with submitForm.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2 };

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/login-form`);
  const login = page.submitForm({ formSelector: '#login', fields: { user: `u${__ITER}` } });
  check(login, {
    'user filled in': (r) => r.json('user') === `u${__ITER}`,
    'hidden field kept': (r) => r.json('csrf') === 'tok',
    'button sent': (r) => r.json('op') === 'login',
    'unchecked box left out': (r) => r.json('news') === undefined,
  });
  const search = page.submitForm({ formSelector: '#search' });
  check(search, {
    'search is a GET': (r) => r.json('method') === 'GET',
    'query from the form': (r) => r.json('query.q') === 'knee',
    "action's own query replaced": (r) => r.json('query.page') === undefined,
  });
}
