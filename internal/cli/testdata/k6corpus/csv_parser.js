// One CSV row per iteration from the VU's own csv.Parser over a file
// opened at the top level; the file's stat, read and seek on the way.
import http from 'k6/http';
import { check } from 'k6';
import { open, SeekMode } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';

export const options = {
  vus: 1,
  iterations: 5,
  thresholds: {
    'http_reqs{plan:pro}': ['count==2'],
    'http_reqs{plan:free}': ['count==2'],
  },
};

const file = await open('./data/users.csv');
const info = await file.stat();
// The first 4 bytes, then back to the start for the parser.
const head = new Uint8Array(4);
const got = await file.read(head);
await file.seek(0, SeekMode.Start);
const parser = new csv.Parser(file, { skipFirstLine: true });

export default async function () {
  const { done, value } = await parser.next();
  check(info, {
    'users.csv, 50 bytes, starts with name': (i) =>
      i.name === 'users.csv' && i.size === 50 && got === 4 && String.fromCharCode(...head) === 'name',
  });
  if (done) {
    return; // the fifth iteration: the four rows are used up
  }
  const [name, plan] = value;
  const res = http.post(`${__ENV.BASE_URL}/echo?name=${encodeURIComponent(name)}`, null, { tags: { plan } });
  check(res, { 'name echoed': (r) => r.json('query.name') === name });
}
