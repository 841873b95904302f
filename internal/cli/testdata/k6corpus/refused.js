// A Blob read as a stream: knee has no ReadableStream.
import http from 'k6/http';
import { Blob } from 'k6/websockets';

export const options = { vus: 1, iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/status/200`);
  const reader = new Blob([res.body]).stream().getReader();
  reader.read();
}
