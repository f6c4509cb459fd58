// A slot's policy state (throttle/policy.ts) as the JSON kept in Redis, and back. Every own field
// of the state is kept (so a field added to the policy is shared without a change here), but not
// the caches derived from the settings, nor lastStart, which Redis keeps itself (the `last` field
// the scripts move on a start and a send).

import type { DownloadSlotOverride, Settings } from '../../../shared/settings';
import { drawFactor } from '../../../shared/settings';
import { SlotPolicy } from '../engine/throttle/policy';
import { HeaderPace } from '../engine/throttle/ratelimit';

/** State fields that are null until needed, with the class they hold then. */
const NULLABLE: Readonly<Record<string, new () => object>> = { headerPace: HeaderPace };

/** Fields that are not state: identity, and caches rebuilt from the settings. */
const NOT_STATE = new Set(['key', 'override', 'lastStart', 'cfgFor', 'cfg', 'backoffP', 'atP', 'rampupP']);

function encodeValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : { $n: String(v) };
  if (v instanceof Float64Array) return { $runs: runs(v) };
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = encodeValue(x);
    return o;
  }
  return v;
}

/** A typed array as [value, count] runs (rampup's ring of start times is mostly −∞: 256 values in a few bytes). */
function runs(a: Float64Array): [unknown, number][] {
  const out: [unknown, number][] = [];
  for (let i = 0; i < a.length; ) {
    let j = i + 1;
    while (j < a.length && Object.is(a[j], a[i])) j++;
    out.push([encodeValue(a[i]), j - i]);
    i = j;
  }
  return out;
}

function decodeNumber(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && '$n' in v) return Number((v as { $n: string }).$n);
  return v;
}

/** The policy's state as JSON. */
export function encodePolicy(p: SlotPolicy): string {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) if (!NOT_STATE.has(k)) o[k] = encodeValue(v);
  return JSON.stringify(o);
}

/** Copies `from` (decoded JSON) into `into`, keeping `into`'s class instances and typed arrays. */
function assignInto(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [k, raw] of Object.entries(from)) {
    if (NOT_STATE.has(k) || !(k in into)) continue;
    const cur = into[k];
    if (cur instanceof Float64Array && raw && typeof raw === 'object' && '$runs' in raw) {
      const rs = (raw as { $runs: [unknown, number][] }).$runs;
      // A ring that grew (StartRing.reserve) comes back at its size.
      const size = rs.reduce((n, r) => n + r[1], 0);
      const arr = size === cur.length ? cur : new Float64Array(size);
      let i = 0;
      for (const [x, n] of rs) {
        const value = Number(decodeNumber(x));
        for (let k = 0; k < n; k++) arr[i++] = value;
      }
      into[k] = arr;
    } else if (cur === null && raw !== null && typeof raw === 'object' && Object.hasOwn(NULLABLE, k)) {
      // A part of the state made on demand (header pacing): rebuilt as its class, then filled.
      const made = new NULLABLE[k]!() as unknown as Record<string, unknown>;
      assignInto(made, raw as Record<string, unknown>);
      into[k] = made;
    } else if (cur !== null && typeof cur === 'object' && raw !== null && typeof raw === 'object' && !('$n' in raw)) {
      assignInto(cur as Record<string, unknown>, raw as Record<string, unknown>);
    } else {
      into[k] = decodeNumber(raw);
    }
  }
}

/** A policy for `key` under `settings` with the state of `json` ('' = a new slot's) and its latest start. */
export function decodePolicy(key: string, override: DownloadSlotOverride | undefined, settings: Settings, json: string, lastStart: number): SlotPolicy {
  const p = new SlotPolicy(key, override, settings);
  if (json !== '') assignInto(p as unknown as Record<string, unknown>, JSON.parse(json) as Record<string, unknown>);
  p.lastStart = lastStart;
  return p;
}

/**
 * The shortest gap the policy may draw after a start (ms): its effective delay at the smallest
 * random factor, never under a Crawl-delay. Redis holds a reserved slot's next start at least this
 * far off until the worker commits the gap it drew.
 */
export function smallestGapMs(p: SlotPolicy, s: Settings): number {
  let gap = p.delaySeconds(s) * 1000 * drawFactor(p.randomization(s), () => 0);
  if (p.crawlDelay !== null && gap < p.crawlDelay * 1000) gap = p.crawlDelay * 1000;
  return gap;
}
