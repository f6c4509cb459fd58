// Replays the recorded Scrapy AutoThrottle cases (test/fixtures/conformance, copied from the team's recordings) through the engine's own
// slot and policy code, and reports the first difference of each failing case.

import { applySettings } from '../../../../shared/settings';
import { recordDebugLine } from '../../../../shared/debug-line';
import { SlotPolicy } from './policy';
import { throttleStep } from './step';

/** Scrapy 2.18 has no backoff: its cases replay through the step with backoff feedback switched off. */
const SCRAPY_HAS_NO_BACKOFF = { BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [] };

export interface VectorEvent {
  readonly latency: number | null;
  readonly status: number;
  readonly meta?: Record<string, unknown>;
  readonly url?: string;
  readonly body_size?: number;
  readonly in_flight?: number;
  readonly create_slot?: boolean;
}

export interface VectorCase {
  readonly name: string;
  readonly settings: Record<string, unknown>;
  readonly events: readonly VectorEvent[];
  readonly start_delay: number;
  readonly slot_start_delays?: Readonly<Record<string, number>>;
  readonly expected_delays: readonly (number | null)[];
  readonly expected_slots: readonly (string | null)[];
  readonly expected_logs?: readonly (string | null)[];
  readonly extension_disabled_message?: string;
}

export interface CaseResult {
  readonly name: string;
  readonly pass: boolean;
  /** The first difference, in words. */
  readonly difference?: string;
}

/** Slot key of SPEC 1 / Scrapy: meta.download_slot (unless null), else the lower-cased hostname. */
export function vectorSlotKey(ev: VectorEvent): string {
  const explicit = ev.meta?.download_slot;
  if (explicit !== undefined && explicit !== null) return String(explicit);
  const host = new URL(ev.url ?? 'https://example.com/').hostname.toLowerCase();
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

export function runVectorCase(c: VectorCase): CaseResult {
  const parsed = applySettings(c.settings);
  if (c.extension_disabled_message !== undefined) {
    // Scrapy disables AutoThrottle for these settings; this project refuses them, naming the setting.
    if (parsed.ok) return { name: c.name, pass: false, difference: `settings were accepted; expected a refusal (Scrapy: ${c.extension_disabled_message})` };
    const named = parsed.errors.some((e) => e.setting === 'AUTOTHROTTLE_TARGET_CONCURRENCY');
    return named ? { name: c.name, pass: true } : { name: c.name, pass: false, difference: `refused, but not naming AUTOTHROTTLE_TARGET_CONCURRENCY: ${parsed.errors.map((e) => e.message).join('; ')}` };
  }
  if (!parsed.ok) return { name: c.name, pass: false, difference: `settings refused: ${parsed.errors.map((e) => e.message).join('; ')}` };
  const noBackoff = applySettings(SCRAPY_HAS_NO_BACKOFF, parsed.settings);
  if (!noBackoff.ok) throw new Error(noBackoff.errors.map((e) => e.message).join('; '));
  const s = noBackoff.settings;
  const slots = new Map<string, SlotPolicy>();
  const own = (slot: SlotPolicy) => slot.ownDelay(s);
  const fmt = (v: unknown) => JSON.stringify(v);
  let first = true;
  for (let i = 0; i < c.events.length; i++) {
    const ev = c.events[i];
    const key = vectorSlotKey(ev);
    const expectedSlot = c.expected_slots[i];
    const expectedDelay = c.expected_delays[i];
    const expectedLog = c.expected_logs ? c.expected_logs[i] : undefined;
    let slot = slots.get(key);
    if (!slot && ev.create_slot !== false) {
      slot = new SlotPolicy(key, s.DOWNLOAD_SLOTS[key], s);
      slots.set(key, slot);
      const wantStart = c.slot_start_delays?.[key] ?? (first ? c.start_delay : undefined);
      if (wantStart !== undefined && own(slot) !== wantStart) {
        return { name: c.name, pass: false, difference: `slot ${key} created with delay ${own(slot)}, expected ${wantStart}` };
      }
      first = false;
    }
    const gotSlot = slot ? key : null;
    if (gotSlot !== expectedSlot) return { name: c.name, pass: false, difference: `event ${i}: slot ${fmt(gotSlot)}, expected ${fmt(expectedSlot)}` };
    let line: string | null = null;
    if (slot) {
      // The same step and the same rendering of its decision as a live crawl's AUTOTHROTTLE_DEBUG line.
      const inFlight = ev.in_flight ?? 1;
      const d = throttleStep(slot, { t: i * 1000, startedAt: i * 1000, status: ev.status, errorKind: null, latency: ev.latency, inFlight, meta: ev.meta }, s);
      if (d.adjusted && s.AUTOTHROTTLE_DEBUG) {
        line = recordDebugLine({ slot: key, inFlight, delayBefore: d.delayBefore, delayAfter: d.delayAfter, latency: ev.latency, bytes: ev.body_size ?? 0 });
      }
    }
    const gotDelay = slot ? own(slot) : null;
    if (gotDelay !== expectedDelay) return { name: c.name, pass: false, difference: `event ${i}: delay ${fmt(gotDelay)}, expected ${fmt(expectedDelay)}` };
    if (expectedLog !== undefined && line !== expectedLog) {
      return { name: c.name, pass: false, difference: `event ${i}: debug line ${fmt(line)}, expected ${fmt(expectedLog)}` };
    }
  }
  return { name: c.name, pass: true };
}

/** Parses a vectors file's JSON and runs every case. */
export function runVectorFile(json: unknown): CaseResult[] {
  const cases = (json as { cases?: unknown })?.cases;
  if (!Array.isArray(cases)) throw new Error('not a conformance vectors file: no "cases" list');
  return cases.map((c) => runVectorCase(c as VectorCase));
}
