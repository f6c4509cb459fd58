// What AutoThrottle and backoff would have done with other settings: replays a crawl's recorded
// responses, slot by slot in their recorded order, through the engine's own pure throttle code.
//
// Time is the recorded time (a virtual clock: nothing waits). Per response, the engine's own throttle
// step (throttle/step.ts), as the crawler calls it, with the Retry-After/RateLimit block the server
// announced taken from the recorded 'blocked_until' change (re-capped by the step at the replay's
// BACKOFF_MAX_DELAY) in place of the response's headers. Recorded inputs are replayed at their times: the user's setting changes
// (except the settings the what-if sets, which hold throughout), delay pins, backoff resets and
// robots.txt Crawl-delays. With the crawl's own settings this reproduces the recorded delays exactly.
// Not reproduced: a THROTTLING_MANAGER plug-in's verdicts, meta.autothrottle_dont_adjust_delay and
// extra scopes of a request (not recorded per response), and rampup's send-rate memory, which is
// approximated from each response's start time.

import { applySettings, type SettingError, type Settings } from '../../../shared/settings';
import type { ChangeRecord, ChangeSource, DelayCause, ResponseRecord } from '../../../shared/types';
import { autothrottleSwitched, SlotPolicy } from '../engine/throttle/policy';
import { resetBackoff, type Block } from '../engine/throttle/backoff';
import { rampupBegin } from '../engine/throttle/rampup';
import { throttleStep } from '../engine/throttle/step';

/** The throttle figures of one replayed response (the rest of the record is the recorded one). */
export interface ReplayedDelays {
  readonly delayBefore: number;
  readonly delayAfter: number;
  readonly delayCause: DelayCause;
  readonly backoffLevel: number;
}

/** A what-if settings change that could not be applied. */
export class WhatIfSettingsError extends Error {
  constructor(readonly errors: readonly SettingError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'WhatIfSettingsError';
  }
}

const SETTING_NAME = /^[A-Z][A-Z0-9_]*$/;

/** Crawl-wide setting changes (slot null, a setting's Scrapy name), oldest first. */
function settingChanges(changes: readonly ChangeRecord[]): ChangeRecord[] {
  return changes.filter((c) => c.slot === null && SETTING_NAME.test(c.setting)).sort((a, b) => a.t - b.t);
}

/**
 * The settings a crawl started with: its stored settings (its latest ones) with every setting that
 * was changed during the crawl set back to the old value of its first change.
 */
export function initialSettings(stored: unknown, changes: readonly ChangeRecord[]): Settings {
  const base = applySettings(stored ?? {});
  if (!base.ok) throw new WhatIfSettingsError(base.errors);
  const first: Record<string, unknown> = {};
  for (const c of settingChanges(changes)) if (!(c.setting in first) && c.oldValue !== undefined) first[c.setting] = c.oldValue;
  const r = applySettings(first, base.settings);
  return r.ok ? r.settings : base.settings;
}

/**
 * Validates a what-if change set over the crawl's starting settings, whole, like 'settings.update'.
 * Throws WhatIfSettingsError naming every refused setting, its value and what is allowed.
 */
export function whatIfSettings(patch: unknown, initial: Settings): { settings: Settings; changed: readonly (keyof Settings)[] } {
  const r = applySettings(patch, initial);
  if (!r.ok) throw new WhatIfSettingsError(r.errors);
  return { settings: r.settings, changed: r.changed };
}

/** A change the replay records in the derived crawl (annotations for the charts). */
export type ReplayChange = ChangeRecord;

/**
 * The replay of one crawl: feed it the recorded responses in (t, id) order with response(); it
 * keeps one Slot per slot key and the live settings, and reports the changes it made or replayed.
 */
export class WhatIfReplay {
  private s: Settings;
  private readonly slots = new Map<string, SlotPolicy>();
  /** Recorded inputs not applied yet, oldest first (blocks kept apart: see takeBlocks). */
  private readonly inputs: ChangeRecord[];
  private next = 0;
  /** Recorded server blocks ('blocked_until'), oldest first; taken once applied. */
  private readonly blocks: ChangeRecord[];
  private readonly taken: boolean[];
  private nextBlock = 0;
  /** Settings the what-if sets: recorded changes of these are not replayed. */
  private readonly held: ReadonlySet<string>;
  /** Changes made or replayed since the last drain. */
  private out: ReplayChange[] = [];

  constructor(settings: Settings, held: Iterable<string>, changes: readonly ChangeRecord[], readonly onlySlot?: string) {
    this.s = settings;
    this.held = new Set(held);
    const mine = (c: ChangeRecord) => c.slot === null || onlySlot === undefined || c.slot === onlySlot;
    const sorted = changes.filter(mine).map((c, i) => ({ c, i })).sort((a, b) => a.c.t - b.c.t || a.i - b.i).map((x) => x.c);
    this.inputs = sorted.filter((c) => c.setting !== 'blocked_until' && this.isInput(c));
    this.blocks = sorted.filter((c) => c.setting === 'blocked_until' && c.slot !== null);
    this.taken = this.blocks.map(() => false);
  }

  get settings(): Settings {
    return this.s;
  }

  /** Keys of the slots seen so far. */
  slotKeys(): string[] {
    return [...this.slots.keys()];
  }

  /** Changes made or replayed since the previous call (for the derived crawl's change log). */
  drainChanges(): ReplayChange[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Replays one recorded response; returns its delays under the what-if settings. */
  response(r: ResponseRecord): ReplayedDelays {
    this.applyInputs(r.t);
    const s = this.s;
    const slot = this.slot(r.slot);
    if (slot.rampupParams(s)) {
      rampupBegin(slot.rampup, r.startedAt);
      if (r.startedAt > slot.lastStart) slot.lastStart = r.startedAt;
    }
    // The block this response brought: it bound the recorded delay (cause 'retry-after'); one that did
    // not bind yet is applied before the slot's next response at a later time (applyInputs).
    const block = r.status !== null && r.delayCause === 'retry-after' ? this.takeBlocks(slot.key, r.t) : null;
    const d = throttleStep(slot, {
      t: r.t, startedAt: r.startedAt, status: r.status, errorKind: r.errorKind, latency: r.latency, inFlight: r.inFlight, block,
    }, s);
    for (const c of d.changes) this.out.push({ t: r.t, slot: slot.key, setting: c.setting, source: c.source, oldValue: c.oldValue, newValue: c.newValue });
    return { delayBefore: d.delayBefore, delayAfter: d.delayAfter, delayCause: d.delayCause, backoffLevel: d.backoffLevel };
  }

  /** Whether a recorded change is an input of the policy (not one of its outputs, not ignored). */
  private isInput(c: ChangeRecord): boolean {
    if (c.slot === null) return SETTING_NAME.test(c.setting);
    return c.setting === 'pin_delay' || c.setting === 'backoff_reset' || c.setting === 'crawl_delay';
  }

  private slot(key: string): SlotPolicy {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = new SlotPolicy(key, this.s.DOWNLOAD_SLOTS[key], this.s);
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** Applies the recorded inputs up to time t (inclusive), and the blocks announced before t. */
  private applyInputs(t: number): void {
    while (this.next < this.inputs.length && this.inputs[this.next].t <= t) this.apply(this.inputs[this.next++]);
    while (this.nextBlock < this.blocks.length && this.blocks[this.nextBlock].t < t) {
      const i = this.nextBlock++;
      if (!this.taken[i]) this.block(i);
    }
  }

  private apply(c: ChangeRecord): void {
    if (c.slot === null) {
      if (this.held.has(c.setting)) return;
      const r = applySettings({ [c.setting]: c.newValue }, this.s);
      // A recorded value the what-if settings make invalid (e.g. below a new BACKOFF_MIN_DELAY) is skipped.
      if (!r.ok || r.changed.length === 0) return;
      const prev = this.s;
      this.s = r.settings;
      if (prev.AUTOTHROTTLE_ENABLED !== r.settings.AUTOTHROTTLE_ENABLED) {
        // As the scheduler does when AutoThrottle is switched.
        for (const slot of this.slots.values()) autothrottleSwitched(slot, r.settings);
      }
      this.out.push(c);
      return;
    }
    const slot = this.slot(c.slot);
    if (c.setting === 'pin_delay') slot.pinDelay = typeof c.newValue === 'number' ? c.newValue : null;
    else if (c.setting === 'crawl_delay') slot.crawlDelay = typeof c.newValue === 'number' ? c.newValue : null;
    else if (c.setting === 'backoff_reset') {
      resetBackoff(slot.backoff);
      slot.rampup.wMax = 0;
      slot.rampup.startedAt = NaN;
      slot.rampup.cutAt = -Infinity;
    }
    this.out.push(c);
  }

  /** Takes the server's blocks of slot `key` announced at exactly `t` (by the response being replayed): the latest end among them. */
  private takeBlocks(key: string, t: number): Block | null {
    let out: Block | null = null;
    for (let i = this.nextBlock; i < this.blocks.length && this.blocks[i].t <= t; i++) {
      const b = this.blocks[i];
      if (this.taken[i] || b.slot !== key || b.t !== t) continue;
      this.taken[i] = true;
      if (typeof b.newValue === 'number' && (out === null || b.newValue > out.until)) out = { until: b.newValue, reason: 'recorded' };
    }
    return out;
  }

  /** Applies recorded block i, re-capped at the replay's BACKOFF_MAX_DELAY. */
  private block(i: number): void {
    this.taken[i] = true;
    const b = this.blocks[i];
    if (typeof b.newValue !== 'number') return;
    const slot = this.slot(b.slot!);
    const until = Math.min(b.newValue, b.t + slot.backoffParams(this.s).maxDelay * 1000);
    if (until > slot.backoff.blockedUntil) {
      const old = slot.backoff.blockedUntil || null;
      slot.backoff.blockedUntil = until;
      this.out.push({ t: b.t, slot: slot.key, setting: 'blocked_until', source: 'backoff', oldValue: old, newValue: until });
    }
  }
}
