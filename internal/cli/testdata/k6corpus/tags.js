// Request tags and the thresholds that select them; one of them fails.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  vus: 2,
  iterations: 4,
  tags: { team: 'shop' },
  thresholds: {
    'http_reqs{kind:write}': ['count==4'],
    'http_reqs{name:item}': ['count==8'],
    'http_reqs{team:shop}': ['count==12'],
    'http_req_duration{name:item}': ['max<10000'],
    'checks{kind:write}': ['rate==1'],
    'http_reqs{status:404}': ['count<4'],
  },
};

const base = __ENV.BASE_URL;

export default function () {
  for (const id of [1, 2]) {
    http.get(`${base}/status/${id === 1 ? 200 : 404}?item=${id}`, { tags: { name: 'item' } });
  }
  const r = http.post(`${base}/form`, { item: '1' }, { tags: { kind: 'write' } });
  check(r, { 'saved': (res) => res.status === 200 }, { kind: 'write' });
}
