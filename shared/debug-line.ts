// Scrapy's AUTOTHROTTLE_DEBUG line, byte for byte (SPEC 4.3), and its log prefix for exports.
// Python's %d on a float truncates toward zero; widths are minimums; %+d prints +0 for (-1, 0].

import type { EventKind } from './types';

function padLeft(s: string, width: number): string {
  return s.length >= width ? s : ' '.repeat(width - s.length) + s;
}

/** Python's `'%Nd' % x` for a float or int x. */
function pyInt(x: number, width: number): string {
  const n = Math.trunc(x);
  return padLeft(String(n === 0 ? 0 : n), width);
}

/** Python's `'%+d' % x`. */
function pySignedInt(x: number): string {
  const n = Math.trunc(x);
  return n >= 0 ? `+${n === 0 ? 0 : n}` : String(n);
}

export interface DebugLineFields {
  readonly slot: string;
  /** Requests in flight on the slot, the reported one included. */
  readonly concurrency: number;
  /** The slot's delay after the update, and before it, in seconds. */
  readonly delay: number;
  readonly oldDelay: number;
  /** Latency in seconds. */
  readonly latency: number;
  /** Body length as received. */
  readonly size: number;
}

/** `slot: foo | conc: 2 | delay: 1500 ms (-500) | latency: 1000 ms | size:     3 bytes` */
export function formatDebugLine(f: DebugLineFields): string {
  return (
    `slot: ${f.slot} | conc:${pyInt(f.concurrency, 2)} | delay:${pyInt(f.delay * 1000, 5)} ms ` +
    `(${pySignedInt((f.delay - f.oldDelay) * 1000)}) | latency:${pyInt(f.latency * 1000, 5)} ms | size:${pyInt(f.size, 6)} bytes`
  );
}

/** The fields of a stored response (or its decision) that its debug line shows. */
export interface DebugLineSource {
  readonly slot: string;
  readonly inFlight: number;
  readonly delayBefore: number;
  readonly delayAfter: number;
  readonly latency: number | null;
  readonly bytes: number;
}

/**
 * A response's debug line, rendered from its record: the slot's effective delay after the response
 * and its change from before, as the engine applies it (SPEC 4.3–4.4). The live line, the Log tab and
 * the debug-log export all come from here, so they agree by construction.
 */
export function recordDebugLine(r: DebugLineSource): string {
  return formatDebugLine({ slot: r.slot, concurrency: r.inFlight, delay: r.delayAfter, oldDelay: r.delayBefore, latency: r.latency ?? 0, size: r.bytes });
}

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** An engine event (a debug line, note, warning or error) as a log line. */
export interface LogEventFields {
  readonly t: number;
  readonly kind: EventKind;
  readonly code: string;
  readonly text: string;
}

/**
 * An event as a log line: AutoThrottle's debug lines exactly as Scrapy prints them (logger
 * scrapy.extensions.throttle), the engine's notes, warnings and errors under the logger `slotscope`.
 * The CLI's log, the Log tab and the debug-log export all write lines through here.
 */
export function eventLogLine(e: LogEventFields): string {
  if (e.kind === 'debug' && e.code === 'autothrottle') return scrapyLogPrefix(e.t) + e.text;
  // Python's logging levels: a debug line and a note are INFO, the rest their own name.
  return scrapyLogPrefix(e.t, 'slotscope', e.kind === 'debug' ? 'INFO' : e.kind.toUpperCase()) + e.text;
}

/** Scrapy's default log prefix in local time: `2026-11-22 10:00:00 [scrapy.extensions.throttle] INFO: `. */
export function scrapyLogPrefix(epochMs: number, logger = 'scrapy.extensions.throttle', level = 'INFO'): string {
  const d = new Date(epochMs);
  const stamp = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return `${stamp} [${logger}] ${level}: `;
}
