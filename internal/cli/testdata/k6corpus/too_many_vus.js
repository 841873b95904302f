// More VUs than iterations to share: k6 refuses the test before it starts.
import http from 'k6/http';

export const options = { vus: 5, iterations: 2 };

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
}
