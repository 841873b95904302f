// Orders from a CSV file, parsed once at the top level (top-level await,
// k6/experimental/fs and csv) and shared by the VUs: one POST per row.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';

const orders = await csv.parse(await open('./data/orders.csv'), { delimiter: ';', asObjects: true });

export const options = {
  // options are read once the init code, awaits included, has run.
  scenarios: { orders: { executor: 'shared-iterations', vus: 2, iterations: orders.length } },
  thresholds: {
    'http_reqs{region:eu}': ['count==3'],
    'http_reqs{region:us}': ['count==1'],
  },
};

export default function () {
  const o = orders[exec.scenario.iterationInTest];
  const res = http.post(`${__ENV.BASE_URL}/echo`, JSON.stringify(o), { tags: { region: o.region } });
  check(res, {
    'row posted': (r) => r.json('body') === JSON.stringify(o),
    'four orders': () => orders.length === 4,
  });
}
