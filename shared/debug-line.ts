// Scrapy's AUTOTHROTTLE_DEBUG line, byte for byte (SPEC 4.3), and its log prefix for exports.
// Python's %d on a float truncates toward zero; widths are minimums; %+d prints +0 for (-1, 0].

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

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Scrapy's default log prefix in local time: `2026-11-22 10:00:00 [scrapy.extensions.throttle] INFO: `. */
export function scrapyLogPrefix(epochMs: number, logger = 'scrapy.extensions.throttle', level = 'INFO'): string {
  const d = new Date(epochMs);
  const stamp = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return `${stamp} [${logger}] ${level}: `;
}
