// How long raw samples stay in the history database, and the pruning pass of the history worker
// that enforces it in small transactions (aggregates, slot summaries, changes and warnings stay).
//
// Settings live in the database's app_settings table (key 'retention'): they belong to the file,
// not to a crawl. Raw responses older than rawMaxAgeDays, or beyond the newest rawMaxRowsPerCrawl
// of a crawl, are deleted together with the AutoThrottle debug lines (events of kind 'debug') of
// the same time span; per-second buckets older than secondsMaxAgeDays are deleted; the coarser
// buckets (10 s to 1 h), slot_stats, status counts, changes and other events are never pruned.
import type { Database, Statement } from 'better-sqlite3';
import type { RetentionSettings } from '../../../shared/contract';

/** No limit on anything: what a database without a 'retention' row uses. */
export const DEFAULT_RETENTION: RetentionSettings = Object.freeze({
  rawMaxAgeDays: null,
  rawMaxRowsPerCrawl: null,
  secondsMaxAgeDays: null,
});

/** Raw rows (or per-second buckets) deleted per transaction: each one stays in the milliseconds. */
export const PRUNE_CHUNK = 2000;
/** How often the worker prunes on its own (it also prunes on open and after a settings change). */
export const PRUNE_INTERVAL_MS = 10 * 60_000;

const DAY_MS = 86_400_000;

/** A refused retention value: the field, the value given and what is allowed. */
export interface RetentionError {
  readonly field: string;
  readonly value: unknown;
  readonly allowed: string;
  readonly message: string;
}

const FIELDS: Readonly<Record<keyof RetentionSettings, { check: (v: number) => boolean; allowed: string }>> = {
  rawMaxAgeDays: { check: (v) => Number.isFinite(v) && v > 0 && v <= 36_500, allowed: 'a number of days > 0 and <= 36500, or null to keep raw samples forever' },
  rawMaxRowsPerCrawl: { check: (v) => Number.isInteger(v) && v >= 1 && v <= Number.MAX_SAFE_INTEGER, allowed: 'a whole number >= 1, or null for no limit' },
  secondsMaxAgeDays: { check: (v) => Number.isFinite(v) && v > 0 && v <= 36_500, allowed: 'a number of days > 0 and <= 36500, or null to keep per-second aggregates forever' },
};

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function refuse(field: string, value: unknown, allowed: string): RetentionError {
  return { field, value, allowed, message: `${field}: ${show(value)} is not allowed (${allowed})` };
}

/**
 * Validates a change of the retention settings (absent fields unchanged, null = no limit) against
 * the current ones. Either every value is valid and the merged settings come back, or nothing is
 * applied and every refused value is named with what is allowed.
 */
export function mergeRetention(
  patch: unknown,
  current: RetentionSettings = DEFAULT_RETENTION,
): { readonly ok: true; readonly settings: RetentionSettings } | { readonly ok: false; readonly errors: readonly RetentionError[] } {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return { ok: false, errors: [refuse('retention', patch, `an object with any of ${Object.keys(FIELDS).join(', ')}`)] };
  }
  const errors: RetentionError[] = [];
  const next: Record<string, number | null> = { ...current };
  for (const [field, value] of Object.entries(patch as Record<string, unknown>)) {
    const spec = FIELDS[field as keyof RetentionSettings];
    if (spec === undefined) {
      errors.push(refuse(field, value, `a retention setting: ${Object.keys(FIELDS).join(', ')}`));
      continue;
    }
    if (value === undefined) continue;
    if (value !== null && (typeof value !== 'number' || !spec.check(value))) {
      errors.push(refuse(field, value, spec.allowed));
      continue;
    }
    next[field] = value as number | null;
  }
  if (errors.length === 0) {
    const raw = next.rawMaxAgeDays;
    const seconds = next.secondsMaxAgeDays;
    // Aggregates outlive raw samples: per-second buckets may not go before the rows they sum up.
    if (seconds !== null && (raw === null || seconds < raw)) {
      const field = 'secondsMaxAgeDays' in (patch as object) ? 'secondsMaxAgeDays' : 'rawMaxAgeDays';
      errors.push(
        field === 'secondsMaxAgeDays'
          ? refuse(field, seconds, raw === null
            ? 'null while rawMaxAgeDays is null (raw samples kept forever): per-second aggregates must outlive raw samples'
            : `a number of days >= rawMaxAgeDays (${raw}), or null: per-second aggregates must outlive raw samples`)
          : refuse(field, raw, `a number of days <= secondsMaxAgeDays (${seconds}): per-second aggregates must outlive raw samples`),
      );
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, settings: Object.freeze(next) as unknown as RetentionSettings };
}

/** The database's retention settings (the defaults when none were saved). */
export function readRetention(db: Database): RetentionSettings {
  const json = db.prepare(`SELECT value_json FROM app_settings WHERE key = 'retention'`).pluck().get() as string | undefined;
  if (json === undefined) return DEFAULT_RETENTION;
  const r = mergeRetention(JSON.parse(json));
  // A hand-edited row that no longer validates keeps everything rather than deleting by mistake.
  return r.ok ? r.settings : DEFAULT_RETENTION;
}

/** Saves validated settings (call from the writing connection). */
export function writeRetention(db: Database, s: RetentionSettings): void {
  db.prepare(`INSERT OR REPLACE INTO app_settings (key, value_json) VALUES ('retention', ?)`).run(JSON.stringify(s));
}

/** What one pruning pass deleted. */
export interface PruneResult {
  readonly responses: number;
  readonly debugEvents: number;
  readonly secondBuckets: number;
}

export interface PrunerHooks {
  /** Called inside each deleting transaction, before it deletes (the aggregator writes what it holds). */
  beforeDelete(): void;
  /** Called inside each deleting transaction, after it deleted. */
  afterDelete(): void;
  /** False once the connection is closing: the pass stops between two chunks. */
  isOpen(): boolean;
}

const yieldTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Deletes raw rows beyond the retention limits in transactions of at most PRUNE_CHUNK rows,
 * yielding to the event loop between them so the worker's batches go on being written.
 */
export class RetentionPruner {
  private readonly crawls: Statement;
  private readonly slotsOf: Statement;
  private readonly nth: Statement;
  private readonly delResponses: Statement;
  private readonly delDebug: Statement;
  private readonly firstSecond: Statement;
  private readonly delSeconds: Statement;
  private running: Promise<PruneResult> = Promise.resolve({ responses: 0, debugEvents: 0, secondBuckets: 0 });

  constructor(private readonly db: Database, private readonly hooks: PrunerHooks) {
    this.crawls = db.prepare(`SELECT id FROM crawls ORDER BY id`).pluck();
    this.slotsOf = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? ORDER BY id`).pluck();
    // The oldest row of the newest `limit` + 1: it and everything older goes.
    this.nth = db.prepare(`SELECT t, id FROM responses WHERE crawl_id = ? ORDER BY t DESC, id DESC LIMIT 1 OFFSET ?`).raw();
    // Binds (crawl, cut t, cut t, cut id, limit): rows before (cut t, cut id) in (t, id) order, inclusive.
    this.delResponses = db.prepare(
      `DELETE FROM responses WHERE id IN (
         SELECT id FROM responses WHERE crawl_id = ? AND t <= ? AND (t < ? OR id <= ?) ORDER BY t LIMIT ?)`,
    );
    this.delDebug = db.prepare(
      `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE crawl_id = ? AND t < ? AND kind = 'debug' ORDER BY t LIMIT ?)`,
    );
    this.firstSecond = db.prepare(`SELECT min(bucket) FROM series WHERE crawl_id = ? AND res_ms = 1000 AND slot_id = ?`).pluck();
    this.delSeconds = db.prepare(
      `DELETE FROM series WHERE crawl_id = ? AND res_ms = 1000 AND slot_id = ? AND bucket >= ? AND bucket < ?`,
    );
  }

  /** Runs a pass after any pass still going; resolves with what this pass deleted. */
  prune(now: number = Date.now()): Promise<PruneResult> {
    const next = this.running.catch(() => undefined).then(() => this.pass(now));
    this.running = next;
    return next;
  }

  private async pass(now: number): Promise<PruneResult> {
    const s = readRetention(this.db);
    let responses = 0;
    let debugEvents = 0;
    let secondBuckets = 0;
    if (s.rawMaxAgeDays === null && s.rawMaxRowsPerCrawl === null && s.secondsMaxAgeDays === null) {
      return { responses, debugEvents, secondBuckets };
    }
    const ageCut = s.rawMaxAgeDays === null ? -Infinity : now - s.rawMaxAgeDays * DAY_MS;
    for (const crawlId of this.crawls.all() as number[]) {
      if (!this.hooks.isOpen()) break;
      // The cut: rows at or before (cutT, cutId) in (t, id) order go.
      let cutT = ageCut;
      let cutId = 0;
      if (s.rawMaxRowsPerCrawl !== null) {
        const r = this.nth.get(crawlId, s.rawMaxRowsPerCrawl) as [number, number] | undefined;
        if (r !== undefined && (r[0] > cutT || (r[0] === cutT && r[1] > cutId))) [cutT, cutId] = r;
      }
      if (cutT > -Infinity) {
        responses += await this.chunks(() => Number(this.delResponses.run(crawlId, cutT, cutT, cutId, PRUNE_CHUNK).changes));
        debugEvents += await this.chunks(() => Number(this.delDebug.run(crawlId, cutT, PRUNE_CHUNK).changes));
      }
      if (s.secondsMaxAgeDays !== null) {
        const cut = now - s.secondsMaxAgeDays * DAY_MS;
        for (const slotId of [0, ...(this.slotsOf.all(crawlId) as number[])]) {
          if (!this.hooks.isOpen()) break;
          const first = this.firstSecond.get(crawlId, slotId) as number | null;
          if (first === null) continue;
          // PRUNE_CHUNK seconds at most per transaction (one bucket per second).
          for (let lo = first; lo < cut && this.hooks.isOpen(); lo += PRUNE_CHUNK * 1000) {
            const hi = Math.min(cut, lo + PRUNE_CHUNK * 1000);
            secondBuckets += this.tx(() => Number(this.delSeconds.run(crawlId, slotId, lo, hi).changes));
            await yieldTurn();
          }
        }
      }
    }
    return { responses, debugEvents, secondBuckets };
  }

  /** Repeats a deleting chunk in its own transaction until it deletes less than a full chunk. */
  private async chunks(step: () => number): Promise<number> {
    let total = 0;
    while (this.hooks.isOpen()) {
      const n = this.tx(step);
      total += n;
      if (n < PRUNE_CHUNK) break;
      await yieldTurn();
    }
    return total;
  }

  private tx(step: () => number): number {
    return this.db.transaction(() => {
      this.hooks.beforeDelete();
      const n = step();
      this.hooks.afterDelete();
      return n;
    }).immediate();
  }
}
