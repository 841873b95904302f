// Sockets closed from a timer, and one the server closes with a code.
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 2,
  thresholds: {
    ws_sessions: ['count==8'],
    ws_msgs_sent: ['count==6'],
    ws_msgs_received: ['count==6'],
  },
};

const base = __ENV.BASE_URL.replace('http://', 'ws://');

export default function () {
  const open = [];
  let echoes = 0;
  let pongs = 0;
  for (let i = 0; i < 3; i++) {
    const ws = new WebSocket(`${base}/ws/echo`);
    ws.onopen = () => { ws.send(`m${i}`); ws.ping(); };
    ws.onmessage = () => echoes++;
    ws.onpong = () => pongs++;
    open.push(ws);
  }
  // the timer closes the three once every echo and pong is back
  const closeAll = () => {
    if (echoes < 3 || pongs < 3) { setTimeout(closeAll, 20); return; }
    open.forEach((ws) => ws.close());
  };
  setTimeout(closeAll, 20);

  const log = [];
  const closing = new WebSocket(`${base}/ws/close/4001`);
  closing.onerror = () => log.push('error');
  closing.onclose = (e) => {
    log.push(`close ${e.code} ${e.reason}`);
    check(log, { 'error, then close 4001': (l) => l.join() === 'error,close 4001 bye' });
  };
}
