// Scraping a page: count items, read the title, follow a link found in it.
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 1, iterations: 2 };

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/page`);
  const doc = page.html();
  const next = doc.find('a.next').attr('href');
  check(doc, {
    'three books listed': (d) => d.find('li.book').size() === 3,
    'title read': (d) => d.find('title').text() === 'Shelf',
  });
  const res = http.get(`${__ENV.BASE_URL}${next}`);
  check(res, { 'link followed': (r) => r.status === 200 });
}
