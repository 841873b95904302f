// Metrics fed straight from parsed input: strings, nulls, booleans.
import http from 'k6/http';
import { Counter, Rate, Trend } from 'k6/metrics';

const items = new Counter('items_seen');
const inStock = new Rate('in_stock');
const price = new Trend('item_price');

export const options = {
  vus: 1,
  iterations: 2,
  thresholds: {
    items_seen: ['count==4'],
    in_stock: ['rate==1'],
    item_price: ['avg==10', 'min==10'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/200`);
  items.add('0'); // a truthy zero: k6 adds 1
  items.add(true);
  items.add(null); // not a number: not added, a warning
  items.add('n/a');
  inStock.add(null);
  inStock.add(1);
  price.add(null);
  price.add('10');
}
