// The event-loop WebSocket API: two sockets per iteration, both open at
// once; the iteration ends when both have closed.
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = {
  vus: 1,
  iterations: 3,
  thresholds: {
    ws_sessions: ['count==6'],
    'ws_sessions{kind:chat}': ['count==3'],
    ws_msgs_sent: ['count==12'],
    ws_msgs_received: ['count==12'],
  },
};

const base = __ENV.BASE_URL.replace('http://', 'ws://');

export default function () {
  // chat sends three text messages and closes after the third echo
  const chat = new WebSocket(`${base}/ws/echo`, null, { tags: { kind: 'chat' } });
  const sent = ['a', 'b', 'c'];
  let n = 0;
  chat.onopen = () => sent.forEach((m) => chat.send(m));
  chat.onmessage = (e) => {
    check(e, { 'echo in order': (ev) => ev.data === sent[n] });
    if (++n === sent.length) chat.close();
  };
  chat.onclose = (e) => check(e, { 'chat closed normally': (ev) => ev.code === 1000 });

  // feed sends one binary message and reads it back as an ArrayBuffer
  const feed = new WebSocket(`${base}/ws/echo`);
  feed.binaryType = 'arraybuffer';
  feed.addEventListener('open', () => feed.send(new Uint8Array([1, 2, 3])));
  feed.addEventListener('message', (e) => {
    check(e.data, { 'three bytes back': (d) => d.byteLength === 3 });
    feed.close();
  });
}
