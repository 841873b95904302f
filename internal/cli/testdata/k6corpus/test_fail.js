// exec.test.fail marks the test failed but lets it run to the end.
import http from 'k6/http';
import exec from 'k6/execution';

export const options = { vus: 1, iterations: 3 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/status/${__ITER === 1 ? 500 : 200}`);
  if (res.status !== 200) {
    exec.test.fail(`iteration ${__ITER} got ${res.status}`);
  }
}
