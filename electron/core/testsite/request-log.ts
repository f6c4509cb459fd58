// The test site's request log: one JSON line per request, so tests and benchmarks can check
// what a crawler really sent (arrival times, concurrency per host). Buffered; never sync I/O.

import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

/** One served request. */
export interface LogEntry {
  /** Arrival time in ms since the site started (monotonic, 3 decimals). */
  readonly t: number;
  /** Host name the request was routed to (or the unknown Host header name). */
  readonly host: string;
  /** Request target as received, query included. */
  readonly path: string;
  /** Requests this host was serving at arrival, this one included. */
  readonly in_flight: number;
  /** Status sent; 0 when no response was sent (reset, hang, client gone, site closed). */
  readonly status: number;
  /** Present when it arrived during an announced Retry-After block (`rate_limit.block_while_retry_after`). */
  readonly blocked?: true;
  /** Present when it got the `soft_block` page instead of the real one. */
  readonly soft_blocked?: true;
}

/** The optional marker of an entry; absent on ordinary requests, so their lines stay as they were. */
export type LogMark = 'blocked' | 'soft_blocked';

const FLUSH_BYTES = 64 * 1024;
const FLUSH_MS = 200;

/** Collects log entries in memory and/or a JSON-lines file. */
export class RequestLog {
  /** Entries kept in memory (empty unless `keep`). */
  readonly entries: LogEntry[] = [];
  /** False when neither a file nor memory wants the entries: callers skip building them. */
  readonly active: boolean;
  private readonly stream: WriteStream | null;
  private readonly keep: boolean;
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private error: Error | null = null;

  private constructor(stream: WriteStream | null, keep: boolean) {
    this.stream = stream;
    this.keep = keep;
    this.active = stream !== null || keep;
    if (stream) {
      stream.on('error', (err) => {
        this.error ??= err;
      });
      this.timer = setInterval(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Opens the log file (truncating it) when a path is given; rejects when it cannot be created. */
  static async open(path: string | undefined, keep: boolean): Promise<RequestLog> {
    if (path === undefined) return new RequestLog(null, keep);
    const stream = createWriteStream(path, { flags: 'w' });
    await once(stream, 'open');
    return new RequestLog(stream, keep);
  }

  /** Records one request; `t` in ms since the start. Ignored after close. */
  add(t: number, host: string, path: string, inFlight: number, status: number, mark?: LogMark): void {
    if (this.closed || !this.active) return;
    const rounded = Math.round(t * 1000) / 1000;
    if (this.keep) {
      const e: LogEntry = { t: rounded, host, path, in_flight: inFlight, status };
      if (mark !== undefined) (e as Record<LogMark, true>)[mark] = true;
      this.entries.push(e);
    }
    if (this.stream) {
      const tail = mark === undefined ? '}\n' : `,"${mark}":true}\n`;
      const line = `{"t":${rounded},"host":${JSON.stringify(host)},"path":${JSON.stringify(path)},"in_flight":${inFlight},"status":${status}${tail}`;
      this.pending.push(line);
      this.pendingBytes += line.length;
      if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    }
  }

  private flush(): void {
    if (!this.stream || this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.stream.write(chunk);
  }

  /** Writes what is buffered and closes the file; rejects with a write error if one happened. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (!this.stream) return;
    this.flush();
    if (!this.error) {
      const finished = once(this.stream, 'close');
      this.stream.end();
      await finished.catch((err: Error) => {
        this.error ??= err;
      });
    } else {
      this.stream.destroy();
    }
    if (this.error) throw this.error;
  }
}
