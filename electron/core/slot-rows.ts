// Slot table rows as the contract's compact tuples, and the change detection that lets the core
// send only changed rows (ARCHITECTURE convention 5).

import type { SlotState, SlotTuple } from '../../shared/contract';
import type { Settings } from '../../shared/settings';
import { scopeAutoThrottle, settingsConcurrency } from '../../shared/throttle-rules';
import type { Slot } from './engine/slot';
import type { SlotSummary } from './store/queries';

/** What the slot is doing; every slot of a paused crawl is paused (nothing starts until it resumes). */
export function slotState(slot: Slot, now: number, crawlPaused = false): SlotState {
  if (slot.paused || crawlPaused) return 'paused';
  if (slot.backoff.blockedUntil > now) return 'blocked';
  if (slot.backoff.level > 0) return 'backoff';
  if (slot.inFlight > 0) return 'active';
  if (slot.queue.size > 0) return 'waiting';
  return 'idle';
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A live slot's row; `crawlPaused`: the whole crawl is paused, so the row says paused and no next start. */
export function slotTuple(slot: Slot, s: Settings, now: number, crawlPaused = false): SlotTuple {
  const eff = slot.effectiveDelay(s, now);
  const at = slot.autothrottle(s);
  return [
    slot.key,
    slotState(slot, now, crawlPaused),
    slot.inFlight,
    slot.concurrency(s),
    at.enabled ? at.target : null,
    round(eff.delay),
    eff.cause,
    slot.queue.size > 0 && !crawlPaused ? Math.round(Math.max(0, slot.readyAt(s))) : null,
    slot.lastLatency,
    slot.latencyCount > 0 ? round(slot.latencySum / slot.latencyCount) : null,
    slot.requests,
    slot.byClass[2],
    slot.byClass[3],
    slot.byClass[4],
    slot.byClass[5],
    slot.s429,
    slot.failures,
    slot.backoff.level,
    slot.queue.size,
    slot.bytes,
    slot.pinDelay,
    slot.pinConcurrency,
  ];
}

/**
 * The row of a slot of a crawl that is not running (finished, stopped, imported, derived), from
 * the store's running totals: nothing in flight or queued, the last delay it applied, the limits
 * of the crawl's stored settings (pins and backoff live only while the crawl runs).
 */
export function storedSlotTuple(sum: SlotSummary, s: Settings): SlotTuple {
  const at = scopeAutoThrottle(sum.slot, s);
  return [
    sum.slot,
    'idle',
    0,
    settingsConcurrency(s),
    at.enabled ? at.target : null,
    round(sum.lastDelay),
    sum.lastCause ?? 'none',
    null,
    sum.lastLatency,
    sum.avgLatency === null ? null : round(sum.avgLatency),
    sum.requests,
    sum.s2xx,
    sum.s3xx,
    sum.s4xx,
    sum.s5xx,
    sum.s429,
    sum.failures,
    sum.lastBackoffLevel ?? 0,
    0,
    sum.bytes,
    null,
    null,
  ];
}

/** Remembers the last rows sent and returns only those that changed since. */
export class SlotRowDiff {
  private readonly last = new Map<string, SlotTuple>();

  changed(slots: Iterable<Slot>, s: Settings, now: number, crawlPaused = false): SlotTuple[] {
    const out: SlotTuple[] = [];
    for (const slot of slots) {
      const row = slotTuple(slot, s, now, crawlPaused);
      const prev = this.last.get(slot.key);
      if (!prev || !sameRow(prev, row)) {
        this.last.set(slot.key, row);
        out.push(row);
      }
    }
    return out;
  }
}

function sameRow(a: SlotTuple, b: SlotTuple): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
