// An async function given to group(), which k6 refuses when it is called.
import http from 'k6/http';
import { group } from 'k6';

export const options = { vus: 1, iterations: 2 };

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  group('checkout', async () => {
    await http.asyncRequest('POST', `${__ENV.BASE_URL}/form`, { item: 'book' });
  });
  http.get(`${__ENV.BASE_URL}/status/202`);
}
