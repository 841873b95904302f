// http.batch with a list and with named requests.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2 };

const base = __ENV.BASE_URL;

export default function () {
  const list = http.batch([
    ['GET', `${base}/status/200`],
    ['GET', `${base}/json`],
    ['POST', `${base}/form`, { user: 'batch' }],
  ]);
  check(list, {
    'all three answered 200': (rs) => rs.every((r) => r.status === 200),
    'form echoed': (rs) => rs[2].json('user') === 'batch',
  });
  const named = http.batch({
    profile: { method: 'GET', url: `${base}/json` },
    gone: `${base}/status/410`,
  });
  check(named, {
    'profile has a user': (rs) => rs.profile.json('user.name') === 'ada',
    'gone is 404': (rs) => rs.gone.status === 404,
  });
}
