import http from 'k6/http';
import { check } from 'k6';

// The article's steps.js: the arrival rate climbs in steps, each held for
// STEP_DURATION, to find where throughput stops following the offered load.
// The article prints only the body; this head is written the way its
// pause.js is. Usage:
//   knee run -e START=100 -e STEP=100 -e STEPS=10 -e STEP_DURATION=20s examples/k6/steps.js
const BASE_URL = __ENV.BASE_URL || 'http://localhost:5080';
const START = Number(__ENV.START || 100);
const STEP = Number(__ENV.STEP || 100);
const STEPS = Number(__ENV.STEPS || 10);
const STEP_DURATION = __ENV.STEP_DURATION || '20s';
const isbns = ['9780441172719', '9780261102217', '9780141439587', '9780451524935', '9780060850524'];

const stages = [];
for (let i = 0; i < STEPS; i++) {
    const rate = START + i * STEP;
    stages.push({ target: rate, duration: '1s' });          // jump to the next rate
    stages.push({ target: rate, duration: STEP_DURATION }); // hold it
}

export const options = {
    scenarios: {
        steps: {
            executor: 'ramping-arrival-rate',
            startRate: START,
            timeUnit: '1s',
            preAllocatedVUs: 50,
            maxVUs: 2000,
            stages,
        },
    },
};

export default function () {
    // A unique query string bypasses the output cache: every request reaches the API and the database.
    const isbn = isbns[Math.floor(Math.random() * isbns.length)];
    const res = http.get(`${BASE_URL}/api/books/${isbn}?run=${__VU}-${__ITER}`, { tags: { name: 'GET /api/books/{isbn}' } });
    check(res, { 'book 200': (r) => r.status === 200 });
}
