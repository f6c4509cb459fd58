// The throughput target: a keep-alive HTTP/1.1 server that answers every GET with the same
// 1 KB page from a prebuilt buffer, cheap enough that the client, not the server, is measured.

import { createServer as createNetServer, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { serveMessages } from './children';

// argv: [--http] (use node:http instead of the raw socket server) [--address A] [--port P]
// Without an IPC channel (run by hand for profiling) it prints its ready line and serves until killed.
const useHttp = process.argv.includes('--http');
const ai = process.argv.indexOf('--address');
const address = ai > 0 ? process.argv[ai + 1] : '127.0.0.1';
const pi = process.argv.indexOf('--port');
const listenPort = pi > 0 ? Number(process.argv[pi + 1]) : 0;

const OPEN = '<!doctype html><html><head><title>bench</title></head><body><p>';
const CLOSE = '</p></body></html>';
const BODY = Buffer.from(OPEN + 'x'.repeat(1024 - OPEN.length - CLOSE.length) + CLOSE); // exactly 1 KB
const HEAD = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${BODY.length}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n`);
const RESPONSE = Buffer.concat([HEAD, BODY]);
const END = Buffer.from('\r\n\r\n');

let requests = 0;
let connections = 0;

function onSocket(socket: Socket): void {
  connections++;
  socket.setNoDelay(true);
  // Requests are GETs without bodies: one request ends at each blank line. Keep the last 3 bytes
  // so a terminator split across reads is still found.
  let tail: Buffer | null = null;
  socket.on('data', (chunk: Buffer) => {
    const buf = tail ? Buffer.concat([tail, chunk]) : chunk;
    let n = 0;
    for (let i = buf.indexOf(END); i >= 0; i = buf.indexOf(END, i + 4)) n++;
    tail = buf.length >= 3 ? buf.subarray(buf.length - 3) : buf;
    if (n === 0) return;
    requests += n;
    if (n === 1) socket.write(RESPONSE);
    else socket.write(Buffer.concat(new Array(n).fill(RESPONSE)));
  });
  socket.on('error', () => undefined);
}

const server = useHttp
  ? createHttpServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    requests++;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': BODY.length });
    res.end(BODY);
  })
  : createNetServer(onSocket);
if (useHttp) server.on('connection', () => connections++);

server.listen({ host: address, port: listenPort, backlog: 4096 }, () => {
  const a = server.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  const ready = { type: 'ready', address, port, bodyBytes: BODY.length };
  if (process.send) process.send(ready);
  else console.log(JSON.stringify(ready));
});

if (process.send) serveMessages((m) => {
  if (m.type === 'usage') {
    return { requests, connections, cpu: process.cpuUsage(), at: performance.now() };
  }
  throw new Error(`unknown message ${String(m.type)}`);
});
