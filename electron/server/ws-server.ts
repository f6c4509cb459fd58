// The browser host: one loopback HTTP server that serves the built renderer and carries the
// contract over a WebSocket at /ws, every request gated by a random token, Host and Origin.

import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Dispatcher, EventName } from '../../shared/contract';
import {
  allowedHostHeaders, allowedOriginSet, checkRequest, createToken, isLoopbackHost, isWildcardHost, securityHeaders,
  tokenCookie, urlHost, type GatePolicy,
} from './security';
import { EXPORT_PATH, handleExport, isHistoryExporter, type HistoryExporter } from './export-route';
import { handleImport, IMPORT_PATH, isLogImporter, type LogImporter } from './import-route';
import { handleScrapyIngest, isScrapyIngester, SCRAPY_INGEST_PATH } from './scrapy-ingest-route';
import { notBuiltPage, resolveStatic, sendFile } from './static-files';
import { startSession } from './ws-session';

export interface ServerOptions {
  /** The host's one entry point (the core's, or any other implementation of the contract). */
  readonly dispatcher: Dispatcher;
  /** Address to bind; default 127.0.0.1. Anything not loopback is logged as a warning. */
  readonly host?: string;
  /** Port; default 0 (any free port). */
  readonly port?: number;
  /** The built renderer's folder; `/` explains how to build it when it is missing. */
  readonly staticDir?: string;
  /** The secret every request must carry; default 32 random bytes, base64url. */
  readonly token?: string;
  /** Extra origins allowed besides http://<allowed host>:<port> (e.g. a Vite dev server). */
  readonly allowedOrigins?: readonly string[];
  /** Largest accepted WebSocket message in bytes; bigger ones close the connection with 1009. Default 1 MiB. */
  readonly maxPayload?: number;
  /**
   * Unsent bytes above which a client stops getting 'slots.update' events and its requests are no
   * longer read until it catches up. Default 8 MiB.
   */
  readonly backpressureBytes?: number;
  /** A client over backpressureBytes that reads nothing for this many ms is closed (and counted). Default 30 s. */
  readonly slowClientMs?: number;
  /** Where the server's lines go; default stderr. */
  readonly log?: (line: string) => void;
  /** Serves GET /export downloads (export-route.ts); default: the dispatcher when it has exportHistory (the core does). */
  readonly exporter?: HistoryExporter;
  /** Takes POST /import uploads of Scrapy logs (import-route.ts); default: the dispatcher when it has importLog (the core does). */
  readonly importer?: LogImporter;
}

export interface RunningServer {
  /** The address to open, token included: http://127.0.0.1:PORT/?token=… */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** Connected WebSocket clients, their unsent bytes, and how many were closed for not reading. */
  stats(): ServerStats;
  /** Closes every client (1001) and the listener. */
  close(): Promise<void>;
}

export interface ServerStats {
  readonly clients: number;
  /** Bytes queued for every client together, not yet taken by the network. */
  readonly bufferedBytes: number;
  /** Clients closed because they read nothing for slowClientMs with more than backpressureBytes unsent. */
  readonly slowClientsClosed: number;
}

const WS_PATH = '/ws';

/**
 * The server could not listen on `host`:`port`: the port is taken, or the host is not an address
 * of this machine. `message` says which, naming both; nothing is left open.
 */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(readonly host: string, readonly port: number, readonly code: string, readonly reason: string) {
    super(code === 'EADDRINUSE'
      ? `cannot listen on ${urlHost(host)}:${port}: the port is in use (another program, or another Slotscope); choose another with --port N, or --port 0 for any free port`
      : code === 'EACCES'
        ? `cannot listen on ${urlHost(host)}:${port}: not permitted (ports below 1024 need privileges); choose another with --port N, or --port 0 for any free port`
        : `cannot listen on ${urlHost(host)}:${port}: ${JSON.stringify(host)} is not an address of this machine (${reason}); use 127.0.0.1, or an address this machine has`);
  }

  /** Whether the fault is the port (taken or privileged) rather than the host. */
  get portFault(): boolean {
    return this.code === 'EADDRINUSE' || this.code === 'EACCES';
  }
}

/** Splits a request target into its raw path and raw query (without `?`). */
function splitTarget(target: string): [path: string, query: string] {
  const q = target.indexOf('?');
  return q < 0 ? [target, ''] : [target.slice(0, q), target.slice(q + 1)];
}

function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

function sendText(res: ServerResponse, status: number, headers: Record<string, string>, text: string, method: string | undefined): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(method === 'HEAD' ? undefined : text);
}

/** Starts the browser host and resolves once it listens. */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? createToken();
  if (token.length === 0) throw new Error('the token must not be empty');
  const maxPayload = o.maxPayload ?? 1024 * 1024;
  const backpressureBytes = o.backpressureBytes ?? 8 * 1024 * 1024;
  const slowClientMs = o.slowClientMs ?? 30_000;
  let slowClientsClosed = 0;
  const log = o.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const exporter = o.exporter ?? (isHistoryExporter(o.dispatcher) ? o.dispatcher : undefined);
  const importer = o.importer ?? (isLogImporter(o.dispatcher) ? o.dispatcher : undefined);
  const scrapyIngester = isScrapyIngester(o.dispatcher) ? o.dispatcher : undefined;

  let policy: GatePolicy | null = null;
  let defaultHost = '127.0.0.1';
  let closing: Promise<void> | null = null;
  let clientCount = 0;
  const clients = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false, clientTracking: false });

  // One event reaches every session in the same synchronous fan-out: serialise it once.
  let cached: { event: EventName; payload: unknown; text: string | null } | null = null;
  const eventText = (event: EventName, payload: unknown): string | null => {
    if (cached && cached.event === event && cached.payload === payload) return cached.text;
    let text: string | null;
    try {
      text = JSON.stringify({ event, payload });
    } catch (e) {
      log(`event ${event} cannot be sent as JSON: ${e instanceof Error ? e.message : String(e)}`);
      text = null;
    }
    const entry = { event, payload, text };
    cached = entry;
    queueMicrotask(() => {
      if (cached === entry) cached = null;
    });
    return text;
  };

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [rawPath, query] = splitTarget(req.url ?? '');
    const gate = checkRequest(req.headers, query, policy!);
    const headers = securityHeaders(gate.host ?? defaultHost);
    if (!gate.ok) {
      if (gate.status !== 401) log(`refused HTTP ${req.method} from ${req.socket.remoteAddress}: ${gate.reason}`);
      const text =
        gate.status === 401 ? 'Missing or wrong token: open the address the server printed (it ends with ?token=...).' : `Refused: ${gate.reason}`;
      sendText(res, gate.status, headers, text, req.method);
      return;
    }
    if (rawPath === SCRAPY_INGEST_PATH && scrapyIngester) {
      if (req.method === 'POST') await handleScrapyIngest(req, res, query, scrapyIngester, headers, log);
      else sendText(res, 405, { ...headers, Allow: 'POST' }, 'Only POST, with a batch of the slotscope-scrapy extension as JSON.', req.method);
      return;
    }
    if (rawPath === IMPORT_PATH && importer) {
      if (req.method === 'POST') await handleImport(req, res, query, importer, headers, log);
      else sendText(res, 405, { ...headers, Allow: 'POST' }, 'Only POST, with the log as the body.', req.method);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendText(res, 405, { ...headers, Allow: 'GET, HEAD' }, 'Only GET and HEAD.', req.method);
      return;
    }
    if (rawPath === EXPORT_PATH && exporter) {
      await handleExport(req, res, query, exporter, headers, log);
      return;
    }
    if (rawPath === WS_PATH) {
      sendText(res, 426, { ...headers, Upgrade: 'websocket' }, 'This is the WebSocket endpoint.', req.method);
      return;
    }
    const target = await resolveStatic(o.staticDir, rawPath);
    const html = { ...headers, 'Cache-Control': 'no-store', ...(gate.tokenInQuery ? { 'Set-Cookie': tokenCookie(token) } : {}) };
    switch (target.kind) {
      case 'file':
        await sendFile(req, res, target, target.type.startsWith('text/html') ? html : { ...headers, 'Cache-Control': 'no-cache' });
        return;
      case 'not-built': {
        const page = notBuiltPage(o.staticDir);
        res.writeHead(200, { ...html, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(Buffer.byteLength(page)) });
        res.end(req.method === 'HEAD' ? undefined : page);
        return;
      }
      case 'bad-path':
        sendText(res, 400, headers, 'Bad path.', req.method);
        return;
      case 'not-found':
        sendText(res, 404, headers, 'Not found.', req.method);
        return;
    }
  }

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const [rawPath, query] = splitTarget(req.url ?? '');
    if (closing) return rejectUpgrade(socket, 503, 'The server is closing.');
    if (rawPath !== WS_PATH) return rejectUpgrade(socket, 404, `The WebSocket endpoint is ${WS_PATH}.`);
    const gate = checkRequest(req.headers, query, policy!);
    if (!gate.ok) {
      log(`refused WebSocket from ${req.socket.remoteAddress}: ${gate.reason}`);
      return rejectUpgrade(socket, gate.status, gate.status === 401 ? 'Missing or wrong token.' : `Refused: ${gate.reason}`);
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      clients.add(ws);
      ws.on('close', () => clients.delete(ws));
      startSession(ws, {
        dispatcher: o.dispatcher, backpressureBytes, slowClientMs, eventText, log, name: `ws client ${++clientCount}`,
        // A shed client is terminated now: it leaves the count now, not when its socket's close event comes.
        onShed: () => {
          slowClientsClosed++;
          clients.delete(ws);
        },
      });
    });
  }

  const server = createServer((req, res) => {
    handleHttp(req, res).catch((e: unknown) => {
      log(`HTTP ${req.method} failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) sendText(res, 500, securityHeaders(defaultHost), 'Internal error.', req.method);
      else res.destroy();
    });
  });
  server.on('upgrade', handleUpgrade);

  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      server.close();
      reject(new ListenError(host, o.port ?? 0, e.code ?? 'EINVAL', e.message));
    };
    server.once('error', onError);
    server.listen(o.port ?? 0, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (e) => log(`server error: ${e.message}`));

  const port = (server.address() as AddressInfo).port;
  const hostHeaders = allowedHostHeaders(host, port);
  policy = { token, hostHeaders, origins: allowedOriginSet(hostHeaders, o.allowedOrigins) };
  const shownHost = isWildcardHost(host) ? '127.0.0.1' : urlHost(host);
  defaultHost = `${shownHost}:${port}`;
  if (!isLoopbackHost(host)) {
    log(
      `WARNING: listening on ${urlHost(host)}:${port}, which is reachable from the network; ` +
        'only the token protects it (anyone who has the URL can steer your crawls).',
    );
  }

  const close = (): Promise<void> => {
    closing ??= (async () => {
      const closed = [...clients].map(
        (ws) =>
          new Promise<void>((resolve) => {
            ws.once('close', () => resolve());
            ws.close(1001, 'server shutting down');
            setTimeout(() => ws.terminate(), 1000).unref();
          }),
      );
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all(closed);
      await serverClosed;
    })();
    return closing;
  };

  const stats = (): ServerStats => {
    let bufferedBytes = 0;
    for (const ws of clients) bufferedBytes += ws.bufferedAmount;
    return { clients: clients.size, bufferedBytes, slowClientsClosed };
  };

  return { url: `http://${defaultHost}/?token=${encodeURIComponent(token)}`, port, token, stats, close };
}
