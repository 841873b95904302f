// Hashing with WebCrypto and with k6/crypto: the same digest both ways.
import http from 'k6/http';
import { check } from 'k6';
import k6crypto from 'k6/crypto';

export const options = { vus: 1, iterations: 2 };

function hex(buf) {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
}

export default async function () {
  const res = http.get(`${__ENV.BASE_URL}/echo?token=abc`);
  const token = res.json('query.token');
  const digest = await crypto.subtle.digest('SHA-256', Uint8Array.from(token.split(''), (c) => c.charCodeAt(0)));
  const known = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
  check(digest, {
    'webcrypto sha-256': (d) => hex(d) === known,
    'k6/crypto agrees': (d) => k6crypto.sha256(token, 'hex') === hex(d),
  });
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  check(bytes, { 'random bytes filled': (b) => b.length === 16 });
}
