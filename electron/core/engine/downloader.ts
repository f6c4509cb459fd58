// The one HTTP client of the engine (undici Agent, keep-alive): measures latency as SPEC 1
// defines it, body time and bytes, decompresses bodies as a stream while they arrive, enforces
// DOWNLOAD_TIMEOUT and DOWNLOAD_MAXSIZE (on decompressed bytes), and maps failures to kinds.
// Uses undici's dispatch handler API: no streams on the hot path of an uncompressed body.

import { Agent, util, type Dispatcher } from 'undici';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import type { Transform } from 'node:stream';

const { parseHeaders } = util;
import { lookup as dnsLookup } from 'node:dns';
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { FailureKind } from '../../../shared/types';
import { MAX_TIMER_MS, type Clock } from '../clock';

export interface DownloaderOptions {
  readonly clock: Clock;
  /** curl-like --resolve map: host → IP address. */
  readonly resolve?: Readonly<Record<string, string>>;
  readonly userAgent: string;
  /** Keep-alive connections per origin (0 = unlimited); see ensureConnections. */
  readonly connectionsPerOrigin?: number;
}

export interface DownloadRequest {
  readonly origin: string;
  readonly path: string;
  readonly method: string;
  /** Seconds. */
  readonly timeout: number;
  /** Bytes, 0 = no limit: on the wire and decompressed (Scrapy's DOWNLOAD_MAXSIZE). */
  readonly maxSize: number;
  /** Keep the decompressed body (up to keepLimit) in the result; otherwise only count it. */
  readonly keepBody: boolean;
  /**
   * Most decompressed bytes kept (0 = no limit): past it the transfer stops and the result is a
   * success with `truncated` (what robots.txt needs: RFC 9309 reads a prefix).
   */
  readonly keepLimit?: number;
  /**
   * Chooses, when the headers arrive, a sink that reads the decompressed body as it arrives
   * (link extraction), or null. Its `drained` resumes a body `write` held.
   */
  readonly sink?: (status: number, headers: Readonly<Record<string, string | string[]>>, drained: () => void) => BodySink | null;
  /** The start time the scheduler stamped (epoch ms), so records and delays share one clock read. */
  readonly startedAt?: number;
  /**
   * Epoch ms before which the request is not written (a request handed over ahead of its start
   * time, Clock.handoverLeadMs): the write waits for it, so no gap on the wire is ever shorter.
   */
  readonly notBefore?: number;
}

/** Longest a write is held for `notBefore` (ms): the handover lead, with room for a late check. */
const MAX_HOLD_MS = 5;

export interface DownloadResult {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly status: number | null;
  readonly headers: Readonly<Record<string, string | string[]>> | null;
  /** The decompressed body, when kept (keepBody), up to keepLimit. */
  readonly body: Buffer | null;
  /** Bytes on the wire (as received, still compressed). */
  readonly bytes: number;
  /** Bytes of the body after decompression (the wire bytes when it was not compressed). */
  readonly decodedBytes: number;
  /** The kept body stopped at keepLimit: the rest was not read. */
  readonly truncated: boolean;
  /** Why the body could not be decompressed (an unknown Content-Encoding, corrupt data), or null. */
  readonly decodeError: string | null;
  /** The sink that read the body (finished when the result is handed over), or null. */
  readonly sink: BodySink | null;
  /** Seconds to headers; null when no headers came. */
  readonly latency: number | null;
  /** Seconds from headers to the end of the body. */
  readonly downloadTime: number | null;
  readonly reused: boolean | null;
  readonly errorKind: FailureKind | null;
  readonly errorMessage: string | null;
}

/** A reader of a decompressed body as it arrives (see DownloadRequest.sink). */
export interface BodySink {
  /** The next body bytes; false asks the downloader to hold the body until the sink's `drained`. */
  write(chunk: Buffer): boolean;
  /** The body has ended; the download completes once `done` is called. */
  end(done: () => void): void;
  /** The download failed or was cancelled. */
  abort(): void;
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

/**
 * The failure kind of a request the HTTP client refused to start (undici rejects a header value
 * or a timeout it cannot use synchronously): recorded like any failure, never left in flight.
 * TODO: 'invalid-request' once FailureKind (shared/types.ts) has it.
 */
export const START_FAILURE_KIND: FailureKind = 'other';

/** A refusal to start, as a failure of the request; an unusable URL stays 'invalid-url'. */
function startFailure(err: unknown): DownloadError {
  if (err instanceof DownloadError) return err;
  const message = (err as Error)?.message || String(err);
  const kind = /\b(path|origin|url)\b/i.test(message) ? 'invalid-url' : START_FAILURE_KIND;
  return new DownloadError(kind, `request not started: ${message}`);
}

// undici's own checks of a request (lib/core/request.js), made before it is handed over: a
// request undici refuses synchronously is not only lost, it also leaves the pool connection it
// was meant for marked busy for good, so later requests to that origin queue forever.
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const BAD_PATH = /[^\u0021-\u00ff]/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Why undici would refuse to start this request, or null. `headersRefusal` is headerRefusal() of
 * the headers it is sent with (they change only with the user agent, so it is worked out then).
 */
function refusal(req: DownloadRequest, headersRefusal: string | null, timeoutMs: number): string | null {
  if (typeof req.path !== 'string' || req.path[0] !== '/' || BAD_PATH.test(req.path)) return `invalid request path ${JSON.stringify(req.path)}`;
  if (typeof req.method !== 'string' || !TOKEN.test(req.method)) return `invalid request method ${JSON.stringify(req.method)}`;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) return `invalid timeout (DOWNLOAD_TIMEOUT ${req.timeout} s)`;
  return headersRefusal;
}

/** Why undici would refuse these request headers, or null. */
function headerRefusal(headers: Readonly<Record<string, string>>): string | null {
  for (const [name, value] of Object.entries(headers)) {
    if (BAD_HEADER_VALUE.test(value)) return `invalid ${name} header ${JSON.stringify(value)} (only tab, printable ASCII and U+0080-U+00FF can be sent)`;
  }
  return null;
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

/**
 * Connection reuse is read from undici's `sendHeaders` diagnostics channel: the message names
 * undici's request, whose handler is our Download (legacy handlers are not wrapped), and the
 * socket, which is tagged when it first carries a request.
 */
const sendHeaders = diagnostics.channel('undici:client:sendHeaders');
const SEEN = Symbol('slotscope.seen');
let kHandler: symbol | undefined;
let channelOn = false;

function onSendHeaders(msg: unknown): void {
  const { request, socket } = msg as { request: Record<symbol, unknown>; socket: Socket & Record<symbol, unknown> };
  kHandler ??= Object.getOwnPropertySymbols(request).find((sym) => sym.description === 'handler');
  const dl = kHandler ? request[kHandler] : undefined;
  if (!(dl instanceof Download)) return;
  dl.reused = socket[SEEN] === true;
  socket[SEEN] = true;
}

type Abort = (err?: Error) => void;

/** Output chunk of the decompressors: the step at which a compression bomb is counted and stopped. */
const INFLATE_CHUNK = 64 * 1024;

/** A streaming decompressor for a Content-Encoding, or a reason it cannot be decoded ('' and identity: none). */
function decompressorFor(encoding: string, first: Buffer): Transform | null {
  const opts = { chunkSize: INFLATE_CHUNK };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip(opts);
    case 'br':
      return createBrotliDecompress(opts);
    case 'deflate':
      // "deflate" is zlib-wrapped; some servers send it raw (as Scrapy, accept both).
      return first.length >= 2 && (first[0] & 0x0f) === 8 && ((first[0] << 8) | first[1]) % 31 === 0 ? createInflate(opts) : createInflateRaw(opts);
  }
  return null;
}

const DECODED_ENCODINGS = new Set(['', 'identity', 'gzip', 'x-gzip', 'br', 'deflate']);

/**
 * One download, driven by undici's handler callbacks (the legacy API, which undici calls
 * directly); it is also its own result, handed to the callback when it ends. A compressed body
 * goes through a zlib stream as it arrives; decompressed bytes are counted against
 * DOWNLOAD_MAXSIZE, kept (keepBody) and handed to the sink, with backpressure back to the socket.
 */
class Download implements DownloadHandle, DownloadResult {
  /** Its place in the downloader's in-flight list, −1 once out of it. */
  activeAt = -1;
  startedAt = 0;
  /** When the request went onto a connection (after any connection set-up). */
  sentAt = 0;
  endedAt = 0;
  deadline = 0;
  private headersAt = 0;
  status: number | null = null;
  headers: Record<string, string | string[]> | null = null;
  body: Buffer | null = null;
  private chunks: Buffer[] | null = null;
  private kept = 0;
  bytes = 0;
  decodedBytes = 0;
  truncated = false;
  decodeError: string | null = null;
  sink: BodySink | null = null;
  latency: number | null = null;
  downloadTime: number | null = null;
  reused: boolean | null = null;
  errorKind: FailureKind | null = null;
  errorMessage: string | null = null;
  private abortFn: Abort | null = null;
  private resumeFn: (() => void) | null = null;
  /** Content-Encoding (lower case, '' for none) and its decompressor once the body starts. */
  private encoding = '';
  private inflater: Transform | null = null;
  /** All wire bytes have arrived (undici's onComplete). */
  private wireDone = false;
  done = false;
  private cancelReason: string | null = null;
  /**
   * True while undici's dispatch runs: an end reported then (a synchronous refusal) is handed
   * to the callback on the next turn, so the caller always has the handle before it ends.
   */
  starting = false;
  private endedWhileStarting = false;

  constructor(
    private readonly owner: Downloader,
    private readonly req: DownloadRequest,
    private readonly cb: (r: DownloadResult) => void,
    private readonly onSent: ((t: number) => void) | undefined,
  ) {
    if (req.keepBody) this.chunks = [];
  }

  cancel(reason = 'cancelled'): void {
    if (this.done) return;
    this.cancelReason = reason;
    this.fail(new DownloadError('cancelled', reason));
  }

  /** undici calls this right before it writes the request (on a reused connection, a check phase after dispatch). */
  onConnect(abort: Abort): void {
    this.abortFn = abort;
    if (this.cancelReason !== null) {
      abort(new DownloadError('cancelled', this.cancelReason));
      return;
    }
    const notBefore = this.req.notBefore;
    if (notBefore !== undefined) {
      // Handed over early: wait for the start time here, synchronously, where nothing else can
      // come between the wait and the write (at most the handover lead, a fraction of a ms).
      const wait = notBefore - this.owner.clock.now();
      if (wait > 0) {
        const until = performance.now() + Math.min(wait, MAX_HOLD_MS);
        while (performance.now() < until) { /* the start time has not come */ }
      }
    }
  }

  /**
   * The request is on the wire: undici calls this right after its write to the socket returned. A
   * slot's next gap counts from here, not from onConnect (before the write), so a pause of this
   * process between the two (a busy machine) can never shorten the gap the server sees.
   */
  onRequestSent(): void {
    this.sentAt = this.owner.clock.now();
    this.onSent?.(this.sentAt);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume?: () => void): boolean {
    if (statusCode < 200) return true; // informational
    this.headersAt = this.owner.clock.now();
    this.status = statusCode;
    this.resumeFn = resume ?? null;
    const headers = parseHeaders(rawHeaders) as Record<string, string | string[]>;
    this.headers = headers;
    const max = this.req.maxSize;
    if (max > 0) {
      const len = Number(headers['content-length']);
      if (len > max) {
        this.stop(new DownloadError('maxsize', `response of ${len} bytes (Content-Length) exceeds DOWNLOAD_MAXSIZE (${max} bytes)`));
        return false;
      }
    }
    const enc = headers['content-encoding'];
    this.encoding = (Array.isArray(enc) ? enc.join(',') : enc ?? '').trim().toLowerCase();
    if (!DECODED_ENCODINGS.has(this.encoding)) {
      // Counted on the wire and drained; nobody can read it.
      this.decodeError = `unsupported Content-Encoding "${this.encoding}"`;
      this.chunks = null;
      return true;
    }
    this.sink = this.req.sink?.(statusCode, headers, () => this.sinkDrained()) ?? null;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return false;
    this.bytes += chunk.length;
    const max = this.req.maxSize;
    if (max > 0 && this.bytes > max) {
      this.stop(new DownloadError('maxsize', `response body exceeds DOWNLOAD_MAXSIZE (${max} bytes) after ${this.bytes} bytes`));
      return false;
    }
    if (this.decodeError !== null) return true;
    if (this.encoding === '' || this.encoding === 'identity') return this.decoded(chunk);
    if (this.inflater === null) this.startInflater(chunk);
    if (this.inflater!.write(chunk)) return true;
    // The decompressor is full (its reader is slow, or the sink holds it): pause the socket.
    this.inflater!.once('drain', () => this.resumeSocket());
    return false;
  }

  private startInflater(first: Buffer): void {
    const z = decompressorFor(this.encoding, first)!;
    this.inflater = z;
    z.on('data', (out: Buffer) => {
      if (!this.decoded(out)) z.pause();
    });
    z.on('error', (err: Error) => this.inflateFailed(err));
    z.on('end', () => {
      if (this.inflater === z) this.bodyEnded();
    });
  }

  /** Decompressed bytes: counted, kept, handed to the sink; false = hold the body for now. */
  private decoded(chunk: Buffer): boolean {
    if (this.done) return false;
    this.decodedBytes += chunk.length;
    const max = this.req.maxSize;
    if (max > 0 && this.decodedBytes > max) {
      this.stop(new DownloadError('maxsize', this.inflater
        ? `response body exceeds DOWNLOAD_MAXSIZE (${max} bytes) when decompressed (${this.encoding}): ${this.decodedBytes} bytes from ${this.bytes} bytes received`
        : `response body exceeds DOWNLOAD_MAXSIZE (${max} bytes) after ${this.decodedBytes} bytes`));
      return false;
    }
    if (this.chunks) {
      const limit = this.req.keepLimit ?? 0;
      if (limit > 0 && this.kept + chunk.length > limit) {
        this.chunks.push(chunk.subarray(0, limit - this.kept));
        this.kept = limit;
        this.truncated = true;
        this.finishEarly();
        return false;
      }
      this.chunks.push(chunk);
      this.kept += chunk.length;
    }
    return this.sink === null || this.sink.write(chunk);
  }

  /** The sink takes bytes again. */
  private sinkDrained(): void {
    if (this.done) return;
    if (this.inflater) this.inflater.resume();
    else this.resumeSocket();
  }

  private resumeSocket(): void {
    if (this.done || this.wireDone) return;
    try {
      this.resumeFn?.();
    } catch {
      /* the request has ended meanwhile */
    }
  }

  /** The body cannot be decompressed: the rest is counted on the wire and drained; what was decoded stands. */
  private inflateFailed(err: Error): void {
    if (this.done) return;
    this.decodeError = `${this.encoding} body could not be decompressed: ${err.message}`;
    const z = this.inflater;
    this.inflater = null;
    z?.destroy();
    if (this.wireDone) this.bodyEnded();
    else this.resumeSocket();
  }

  onComplete(): void {
    if (this.done || this.wireDone) return;
    this.wireDone = true;
    if (this.inflater !== null && this.decodeError === null) this.inflater.end();
    else this.bodyEnded();
  }

  /** Every body byte has been decompressed: the sink finishes, then the download completes. */
  private bodyEnded(): void {
    if (this.done) return;
    const sink = this.sink;
    if (sink) sink.end(() => this.complete());
    else this.complete();
  }

  /**
   * Success. The end time is now, when the body has been decompressed and read (a page's links
   * are scanned as it arrives, a slice behind the socket at most): results are handed over in the
   * order of their end times, the order the throttle steps must be replayed in.
   */
  private complete(): void {
    if (this.done) return;
    this.done = true;
    this.endedAt = this.owner.clock.now();
    this.owner.untrack(this);
    if (this.chunks) this.body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = null;
    this.latency = (this.headersAt - this.startedAt) / 1000;
    this.downloadTime = (this.endedAt - this.headersAt) / 1000;
    this.deliver();
  }

  /** The kept body reached keepLimit: a success with what was read; the rest of the transfer is dropped. */
  private finishEarly(): void {
    const z = this.inflater;
    this.inflater = null;
    z?.destroy();
    this.sink?.abort();
    this.sink = null;
    this.complete();
    if (!this.wireDone) {
      this.wireDone = true;
      try {
        this.abortFn?.(new DownloadError('cancelled', 'body limit reached'));
      } catch {
        /* already finished */
      }
    }
  }

  onError(err: Error): void {
    this.fail(err);
  }

  /** Stops the transfer with `err` (undici's abort, which also reports it) and fails the download. */
  private stop(err: DownloadError): void {
    if (!this.wireDone) {
      try {
        this.abortFn?.(err);
      } catch {
        /* already finished */
      }
    }
    this.fail(err);
  }

  fail(err: unknown): void {
    if (this.done) return;
    if (this.starting) err = startFailure(err);
    this.done = true;
    this.owner.untrack(this);
    if (!this.wireDone && (!(err instanceof DownloadError) || err.kind === 'timeout' || err.kind === 'cancelled')) {
      // Make sure the socket work stops too.
      try {
        this.abortFn?.(err instanceof Error ? err : new Error(String(err)));
      } catch {
        /* already finished */
      }
    }
    const z = this.inflater;
    this.inflater = null;
    z?.destroy();
    this.sink?.abort();
    this.endedAt = this.owner.clock.now();
    this.status = null;
    this.body = null;
    this.chunks = null;
    this.errorKind = this.cancelReason !== null ? 'cancelled' : classifyError(err);
    this.errorMessage = (err as Error)?.message || String(err);
    if (this.headersAt) {
      this.latency = (this.headersAt - this.startedAt) / 1000;
      this.downloadTime = (this.endedAt - this.headersAt) / 1000;
    }
    this.deliver();
  }

  private deliver(): void {
    if (this.starting) this.endedWhileStarting = true;
    else this.cb(this);
  }

  /** @internal undici's dispatch has returned; an end it reported meanwhile goes out now, on the next turn. */
  started(): void {
    this.starting = false;
    if (this.endedWhileStarting) this.owner.clock.defer(() => this.cb(this));
  }
}

/** How often in-flight downloads are checked against DOWNLOAD_TIMEOUT. */
const TIMEOUT_SWEEP_MS = 200;

export class Downloader {
  agent: Agent;
  readonly clock: Clock;
  /**
   * Downloads in flight, each at its `activeAt`; removed by moving the last into its place. Not a
   * Set: a Set of short-lived entries rehashes into a new table now and then, and the dropped
   * table, promoted to the old generation, kept every download it held (and its request, headers
   * and closures) alive through each young-generation GC until the next full one (--trace-gc-nvp:
   * 1.6 MB survived each scavenge at one host, against 0.2 MB for raw undici).
   */
  private readonly active: Download[] = [];
  private sweeper: NodeJS.Timeout | null = null;
  private readonly headers: Record<string, string>;
  /** headerRefusal(headers), worked out whenever they change (not per request). */
  private headersRefusal: string | null;
  /** The --resolve map as a Map: a host named `constructor` or `__proto__` is just a host. */
  private readonly resolve: ReadonlyMap<string, string>;
  private connections: number;
  private readonly retired: Agent[] = [];

  constructor(o: DownloaderOptions) {
    this.clock = o.clock;
    this.resolve = new Map(Object.entries(o.resolve ?? {}).map(([host, ip]) => [host.toLowerCase(), ip]));
    this.connections = o.connectionsPerOrigin ?? 0;
    this.headers = {
      'user-agent': o.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip, deflate, br',
    };
    this.headersRefusal = headerRefusal(this.headers);
    this.agent = this.makeAgent();
    if (!channelOn) {
      channelOn = true;
      sendHeaders.subscribe(onSendHeaders);
    }
  }

  private makeAgent(): Agent {
    const resolve = this.resolve;
    return new Agent({
      keepAliveTimeout: 30_000,
      connections: this.connections || null,
      maxRedirections: 0,
      connect: {
        lookup(hostname: string, _options: unknown, cb: (err: Error | null, addresses: { address: string; family: number }[]) => void) {
          const fixed = resolve.get(hostname.toLowerCase());
          if (fixed) {
            cb(null, [{ address: fixed, family: fixed.includes(':') ? 6 : 4 }]);
            return;
          }
          dnsLookup(hostname, { all: true }, (err, addrs) => cb(err, addrs as { address: string; family: number }[]));
        },
      },
    } as Agent.Options);
  }

  /**
   * Keep-alive connections per origin: at least the largest slot concurrency, so a slot's
   * lanes map to connections one to one. Raising it swaps in a new agent; the old one
   * finishes its in-flight requests and closes.
   */
  ensureConnections(n: number): void {
    if (this.connections === 0 || n <= this.connections) return;
    this.connections = n;
    this.renewAgent();
  }

  /** Swaps in a new agent; the old one finishes its in-flight requests and closes. */
  private renewAgent(): void {
    const old = this.agent;
    this.agent = this.makeAgent();
    this.retired.push(old);
    old.close().catch(() => undefined).finally(() => {
      const i = this.retired.indexOf(old);
      if (i >= 0) this.retired.splice(i, 1);
    });
  }

  setUserAgent(ua: string): void {
    this.headers['user-agent'] = ua;
    this.headersRefusal = headerRefusal(this.headers);
  }

  /**
   * Starts a download; `cb` is called exactly once with the result or the failure, and never
   * before fetch has returned. A request the HTTP client refuses to start (a header value or a
   * timeout it cannot use) ends as a failure of kind START_FAILURE_KIND ("request not started:
   * …"). `onSent` is told when the request goes onto a connection.
   */
  fetch(req: DownloadRequest, cb: (r: DownloadResult) => void, onSent?: (t: number) => void): DownloadHandle {
    const dl = new Download(this, req, cb, onSent);
    dl.startedAt = req.startedAt ?? this.clock.now();
    dl.deadline = dl.startedAt + req.timeout * 1000;
    dl.activeAt = this.active.length;
    this.active.push(dl);
    if (!this.sweeper) this.armSweeper();
    // Within any timer's limit (the sweeper enforces the rest); a non-finite one is refused by
    // undici and recorded as a start failure.
    const ms = req.timeout * 1000;
    const timeoutMs = Number.isFinite(ms) ? Math.min(ms, MAX_TIMER_MS) : ms;
    dl.starting = true;
    const refused = refusal(req, this.headersRefusal, timeoutMs);
    if (refused !== null) {
      dl.fail(new Error(refused));
    } else {
      try {
        this.agent.dispatch(
          { origin: req.origin, path: req.path, method: req.method, headers: this.headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
          dl as unknown as Dispatcher.DispatchHandler,
        );
      } catch (err) {
        dl.fail(err);
      }
      // undici refused it for a reason not checked above: its pool may now hold a connection
      // marked busy for good, so later requests go to a fresh agent.
      if (dl.done) this.renewAgent();
    }
    dl.started();
    return dl;
  }

  /** @internal a download has ended. */
  untrack(dl: Download): void {
    const i = dl.activeAt;
    if (i < 0) return;
    dl.activeAt = -1;
    const last = this.active.pop()!;
    if (last !== dl) {
      this.active[i] = last;
      last.activeAt = i;
    }
  }

  /** Downloads in flight. */
  get inFlight(): number {
    return this.active.length;
  }

  /** Cancels every download in flight (each ends as a failure of kind 'cancelled'). */
  cancelAll(reason: string): void {
    for (const dl of this.active.slice()) dl.cancel(reason);
  }

  /** One timer checks every in-flight download's DOWNLOAD_TIMEOUT (total time, not idle time). */
  private armSweeper(): void {
    this.sweeper = setTimeout(() => {
      this.sweeper = null;
      const now = this.clock.now();
      for (const dl of this.active.slice()) {
        if (now >= dl.deadline) dl.fail(new DownloadError('timeout', `no complete response within DOWNLOAD_TIMEOUT (${(dl.deadline - dl.startedAt) / 1000} s)`));
      }
      if (this.active.length > 0) this.armSweeper();
    }, TIMEOUT_SWEEP_MS);
  }

  async close(): Promise<void> {
    if (this.sweeper) clearTimeout(this.sweeper);
    this.sweeper = null;
    await Promise.all([this.agent, ...this.retired].map((a) => a.destroy()));
  }
}
