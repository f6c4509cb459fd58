// The debug log of one crawl outside React: the latest events ('log.events', AutoThrottle's lines
// and the engine's), refetched every second while the crawl runs, with lines written Scrapy's way.

import { eventLogLine } from '../../../../shared/debug-line';
import type { EventKind, EventRecord } from '../../../../shared/types';
import { FrameStore } from '../../store/frame-store';
import type { Transport } from '../../transport/transport';
import { toAppError } from '../../transport/transport';

/** How many of the latest events the view holds. */
export const LOG_LIMIT = 20_000;
const POLL_MS = 1000;
const MAX_POLL_MS = 10_000;

/** An event as a log line (the one rendering the CLI and the debug-log export use too). */
export const logLine: (e: EventRecord) => string = eventLogLine;

export interface LogLine {
  readonly event: EventRecord;
  readonly text: string;
  /** Lower-cased text for the filter. */
  readonly lower: string;
}

const key = (e: EventRecord) => `${e.t}|${e.kind}|${e.code}|${e.slot ?? ''}|${e.text}`;

export class LogStore extends FrameStore {
  private lines: readonly LogLine[] = [];
  private err: string | null = null;
  private loadingValue = true;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by start() and stop(): a polling loop of an earlier run ends. */
  private run = 0;
  private filterSig = '';

  constructor(private readonly transport: Transport, private readonly crawlId: number) {
    super();
  }

  all(): readonly LogLine[] {
    return this.lines;
  }

  error(): string | null {
    return this.err;
  }

  loading(): boolean {
    return this.loadingValue;
  }

  /**
   * Fetches now, then while `live` again a second after each answer, or five times the last
   * answer's duration when that is longer (the host reads the whole log to return its tail);
   * `slot` and `kind` narrow the query on the host.
   */
  start(live: boolean, slot: string | null, kind: EventKind | null): void {
    const sig = `${slot ?? ''}|${kind ?? ''}`;
    if (sig !== this.filterSig) {
      this.filterSig = sig;
      this.lines = [];
      this.loadingValue = true;
      this.changed();
    }
    this.stop();
    const run = ++this.run;
    const loop = async (): Promise<void> => {
      const t = performance.now();
      await this.load(slot, kind);
      if (!live || run !== this.run) return;
      const wait = Math.min(MAX_POLL_MS, Math.max(POLL_MS, 5 * (performance.now() - t)));
      this.timer = setTimeout(() => void loop(), wait);
    };
    void loop();
  }

  stop(): void {
    this.run++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async load(slot: string | null, kind: EventKind | null): Promise<void> {
    const sig = this.filterSig;
    try {
      const events = await this.transport.invoke('log.events', {
        id: this.crawlId, limit: LOG_LIMIT, ...(slot ? { slot } : {}), ...(kind ? { kind } : {}),
      });
      if (sig !== this.filterSig) return;
      this.merge(events);
      this.err = null;
    } catch (e) {
      if (sig !== this.filterSig) return;
      this.err = toAppError(e).message;
    }
    this.loadingValue = false;
    this.changed();
  }

  /** Appends what came after the last line held; when that line is no longer in the answer, takes the answer whole. */
  private merge(events: readonly EventRecord[]): void {
    const toLine = (event: EventRecord): LogLine => {
      const text = logLine(event);
      return { event, text, lower: text.toLowerCase() };
    };
    const last = this.lines[this.lines.length - 1];
    let i = -1;
    if (last) {
      const k = key(last.event);
      for (let j = events.length - 1; j >= 0; j--) {
        if (events[j].t < last.event.t) break;
        if (key(events[j]) === k) {
          i = j;
          break;
        }
      }
    }
    if (i < 0) {
      this.lines = events.map(toLine);
      return;
    }
    if (i === events.length - 1) return;
    const next = this.lines.concat(events.slice(i + 1).map(toLine));
    this.lines = next.length > LOG_LIMIT ? next.slice(next.length - LOG_LIMIT) : next;
  }
}
