// The one HTTP client of the engine (undici Agent, keep-alive): measures latency as SPEC 1
// defines it, body time and bytes, enforces DOWNLOAD_TIMEOUT and DOWNLOAD_MAXSIZE, and maps
// failures to kinds. Uses undici's dispatch handler API: no streams on the hot path.

import { Agent, type Dispatcher } from 'undici';
import { lookup as dnsLookup } from 'node:dns';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { FailureKind } from '../../../shared/types';
import type { Clock } from '../clock';

export interface DownloaderOptions {
  readonly clock: Clock;
  /** curl-like --resolve map: host → IP address. */
  readonly resolve?: Readonly<Record<string, string>>;
  readonly userAgent: string;
  /** Keep-alive connections per origin (0 = unlimited). */
  readonly connectionsPerOrigin?: number;
}

export interface DownloadRequest {
  readonly origin: string;
  readonly path: string;
  readonly method: string;
  /** Seconds. */
  readonly timeout: number;
  /** Bytes, 0 = no limit. */
  readonly maxSize: number;
  /** Keep the body bytes (for link extraction); otherwise only count them. */
  readonly keepBody: boolean;
}

export interface DownloadResult {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly status: number | null;
  readonly headers: Readonly<Record<string, string | string[]>> | null;
  /** Raw body as received (still compressed), when kept. */
  readonly body: Buffer | null;
  readonly bytes: number;
  /** Seconds to headers; null when no headers came. */
  readonly latency: number | null;
  /** Seconds from headers to the end of the body. */
  readonly downloadTime: number | null;
  readonly reused: boolean | null;
  readonly errorKind: FailureKind | null;
  readonly errorMessage: string | null;
}

export interface DownloadHandle {
  /** Cancels the download; it completes with errorKind 'cancelled'. */
  cancel(reason?: string): void;
}

class DownloadError extends Error {
  constructor(readonly kind: FailureKind, message: string) {
    super(message);
  }
}

/** Maps an error from undici or the OS to a failure kind (SPEC 1 backoff feedback kinds). */
export function classifyError(err: unknown): FailureKind {
  if (err instanceof DownloadError) return err.kind;
  const e = err as { code?: string; name?: string; cause?: unknown } | null;
  const code = e?.code ?? '';
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNREFUSED':
      return 'connect-refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'connect-reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'dns';
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return 'cancelled';
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'maxsize';
    case 'UND_ERR_INVALID_ARG':
      return 'invalid-url';
  }
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SSL|TLS/.test(code)) return 'tls';
  if (e?.name === 'AbortError') return 'cancelled';
  if (e?.cause && e.cause !== err) return classifyError(e.cause);
  return 'other';
}

/** Connection reuse is read from undici's diagnostics channels, matched to our download by request object. */
const requestCreate = diagnostics.channel('undici:request:create');
const sendHeaders = diagnostics.channel('undici:client:sendHeaders');
let creating: Download | null = null;
const byRequest = new WeakMap<object, Download>();
const seenSockets = new WeakSet<Socket>();
let channelsOn = false;

function onRequestCreate(msg: unknown): void {
  if (creating) byRequest.set((msg as { request: object }).request, creating);
}

function onSendHeaders(msg: unknown): void {
  const { request, socket } = msg as { request: object; socket: Socket };
  const dl = byRequest.get(request);
  if (!dl) return;
  dl.reused = seenSockets.has(socket);
  seenSockets.add(socket);
}

class Download implements DownloadHandle, Dispatcher.DispatchHandler {
  startedAt = 0;
  headersAt = 0;
  status: number | null = null;
  headers: Record<string, string | string[]> | null = null;
  chunks: Buffer[] | null = null;
  bytes = 0;
  reused: boolean | null = null;
  controller: Dispatcher.DispatchController | null = null;
  private done = false;
  private cancelReason: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly req: DownloadRequest,
    private readonly cb: (r: DownloadResult) => void,
  ) {
    if (req.keepBody) this.chunks = [];
  }

  armTimeout(): void {
    this.timer = setTimeout(() => {
      this.fail(new DownloadError('timeout', `no complete response within DOWNLOAD_TIMEOUT (${this.req.timeout} s)`));
    }, this.req.timeout * 1000);
  }

  cancel(reason = 'cancelled'): void {
    if (this.done) return;
    this.cancelReason = reason;
    this.fail(new DownloadError('cancelled', reason));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelReason !== null) controller.abort(new DownloadError('cancelled', this.cancelReason));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>): void {
    if (statusCode < 200 && statusCode !== 101) return; // informational
    this.headersAt = this.clock.now();
    this.status = statusCode;
    this.headers = headers;
    const max = this.req.maxSize;
    if (max > 0) {
      const len = Number(headers['content-length']);
      if (len > max) {
        controller.abort(new DownloadError('maxsize', `response of ${len} bytes (Content-Length) exceeds DOWNLOAD_MAXSIZE (${max} bytes)`));
      }
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    const max = this.req.maxSize;
    if (max > 0 && this.bytes > max) {
      controller.abort(new DownloadError('maxsize', `response body exceeds DOWNLOAD_MAXSIZE (${max} bytes) after ${this.bytes} bytes`));
      return;
    }
    if (this.chunks) this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    const end = this.clock.now();
    const body = this.chunks ? (this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)) : null;
    this.cb({
      startedAt: this.startedAt,
      endedAt: end,
      status: this.status,
      headers: this.headers,
      body,
      bytes: this.bytes,
      latency: (this.headersAt - this.startedAt) / 1000,
      downloadTime: (end - this.headersAt) / 1000,
      reused: this.reused,
      errorKind: null,
      errorMessage: null,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    if (!(err instanceof DownloadError) || err.kind === 'timeout' || err.kind === 'cancelled') {
      // Make sure the socket work stops too.
      try {
        this.controller?.abort(err instanceof Error ? err : new Error(String(err)));
      } catch {
        /* already finished */
      }
    }
    const end = this.clock.now();
    const kind = this.cancelReason !== null ? 'cancelled' : classifyError(err);
    const message = (err as Error)?.message || String(err);
    this.cb({
      startedAt: this.startedAt,
      endedAt: end,
      status: null,
      headers: this.headers,
      body: null,
      bytes: this.bytes,
      latency: this.headersAt ? (this.headersAt - this.startedAt) / 1000 : null,
      downloadTime: this.headersAt ? (end - this.headersAt) / 1000 : null,
      reused: this.reused,
      errorKind: kind,
      errorMessage: message,
    });
  }
}

export class Downloader {
  readonly agent: Agent;
  private readonly clock: Clock;
  private readonly headers: Record<string, string>;

  constructor(o: DownloaderOptions) {
    this.clock = o.clock;
    const resolve = o.resolve ?? {};
    this.headers = {
      'user-agent': o.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip, deflate, br',
    };
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: o.connectionsPerOrigin || null,
      maxRedirections: 0,
      connect: {
        lookup(hostname: string, options: unknown, cb: (err: Error | null, addresses: { address: string; family: number }[]) => void) {
          const fixed = resolve[hostname.toLowerCase()];
          if (fixed) {
            cb(null, [{ address: fixed, family: fixed.includes(':') ? 6 : 4 }]);
            return;
          }
          dnsLookup(hostname, { all: true }, (err, addrs) => cb(err, addrs as { address: string; family: number }[]));
        },
      },
    } as Agent.Options);
    if (!channelsOn) {
      channelsOn = true;
      requestCreate.subscribe(onRequestCreate);
      sendHeaders.subscribe(onSendHeaders);
    }
  }

  setUserAgent(ua: string): void {
    this.headers['user-agent'] = ua;
  }

  /** Starts a download; `cb` is called exactly once with the result or the failure. */
  fetch(req: DownloadRequest, cb: (r: DownloadResult) => void): DownloadHandle {
    const dl = new Download(this.clock, req, cb);
    dl.startedAt = this.clock.now();
    dl.armTimeout();
    const timeoutMs = req.timeout * 1000;
    creating = dl;
    try {
      this.agent.dispatch(
        { origin: req.origin, path: req.path, method: req.method, headers: this.headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
        dl,
      );
    } catch (err) {
      dl.fail(err);
    } finally {
      creating = null;
    }
    return dl;
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}
