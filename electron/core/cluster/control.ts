// Steering a shared crawl (issue 18): its status, live settings and per-slot actions, written to
// Redis where every worker reads them (the status and settings within a 200 ms poll; a slot's state
// at its next reservation), and what the console shows of it: its slots and its workers.

import type { Redis } from 'ioredis';
import { applySettings, validateDelayPin, type Settings, type SettingsResult } from '../../../shared/settings';
import type { ChangeRecord, SlotChange } from '../../../shared/types';
import { resetBackoff } from '../engine/throttle/backoff';
import type { SlotPolicy } from '../engine/throttle/policy';
import { decodePolicy } from './policy-codec';
import { editSlot, HEARTBEAT_TTL_MS, type WorkerInfo } from './worker';

export type SharedStatus = 'starting' | 'running' | 'paused' | 'stopped' | 'finished';

export class SharedControl {
  constructor(
    private readonly r: Redis,
    /** The crawl's key prefix. */
    readonly prefix: string,
    /** Who edits (for lock tokens). */
    private readonly who = 'console',
  ) {}

  async status(): Promise<SharedStatus | null> {
    return (await this.r.hget(`${this.prefix}meta`, 'status')) as SharedStatus | null;
  }

  /** Pause, resume or stop every worker: they read it within their 200 ms poll. */
  async setStatus(status: 'running' | 'paused' | 'stopped'): Promise<void> {
    const cur = await this.status();
    if (cur === 'finished' || cur === 'stopped') throw new Error(`the shared crawl is ${cur}`);
    await this.r.hset(`${this.prefix}meta`, 'status', status);
  }

  async settings(): Promise<Settings> {
    const [config, json] = await this.r.hmget(`${this.prefix}meta`, 'config', 'settings');
    void config;
    return JSON.parse(json ?? '{}') as Settings;
  }

  /** Validates a change set whole against the live settings and publishes it; nothing is written when a value is refused. */
  async updateSettings(patch: unknown): Promise<SettingsResult> {
    const current = await this.settings();
    const r = applySettings(patch, current);
    if (!r.ok || r.changed.length === 0) return r;
    await this.r.multi().hset(`${this.prefix}meta`, 'settings', JSON.stringify(r.settings)).hincrby(`${this.prefix}meta`, 'settingsV', 1).exec();
    return r;
  }

  /** A per-slot action under the slot's lock, with the engine's own setters; returns the change to record. */
  private async edit(slot: string, setting: SlotChange, change: (p: SlotPolicy, s: Settings) => { oldValue: unknown; newValue: unknown }): Promise<ChangeRecord> {
    const s = await this.settings();
    let out: { oldValue: unknown; newValue: unknown } = { oldValue: null, newValue: null };
    let t = 0;
    await editSlot(this.r, this.prefix, slot, s, this.who, (policy, now) => {
      out = change(policy, s);
      t = now;
      return { lease: '', requeue: null, adds: [], record: null };
    });
    return { t, slot, setting, source: 'user', oldValue: out.oldValue, newValue: out.newValue };
  }

  pauseSlot(slot: string, paused: boolean): Promise<ChangeRecord> {
    return this.edit(slot, 'paused', (p) => {
      const old = p.paused;
      p.paused = paused;
      return { oldValue: old, newValue: paused };
    });
  }

  pinDelay(slot: string, pin: number | null): Promise<ChangeRecord> {
    const seconds = validateDelayPin(pin);
    return this.edit(slot, 'pin_delay', (p) => {
      const old = p.pinDelay;
      p.pinDelay = seconds;
      return { oldValue: old, newValue: seconds };
    });
  }

  pinConcurrency(slot: string, n: number | null): Promise<ChangeRecord> {
    if (n !== null && !(Number.isInteger(n) && n >= 1)) throw new RangeError(`concurrency pin: ${n} is not allowed (a whole number >= 1, or null to clear)`);
    return this.edit(slot, 'pin_concurrency', (p) => {
      const old = p.pinConcurrency;
      p.pinConcurrency = n;
      return { oldValue: old, newValue: n };
    });
  }

  resetBackoff(slot: string): Promise<ChangeRecord> {
    return this.edit(slot, 'backoff_reset', (p) => {
      const old = { level: p.backoff.level, blockedUntil: p.backoff.blockedUntil || null };
      resetBackoff(p.backoff);
      p.rampup.wMax = 0;
      p.rampup.startedAt = NaN;
      p.rampup.cutAt = -Infinity;
      return { oldValue: old, newValue: { level: 0, blockedUntil: null } };
    });
  }

  /** Every slot as Redis holds it: its policy (the engine's), in flight, queued, next start (Redis clock). */
  async slots(): Promise<SharedSlot[]> {
    const s = await this.settings();
    const names = await this.r.smembers(`${this.prefix}slots`);
    const p = this.r.pipeline();
    for (const n of names) {
      p.hmget(`${this.prefix}s:${n}`, 'pol', 'last', 'inflight', 'ready', 'conc');
      p.zcard(`${this.prefix}q:${n}`);
    }
    const res = (await p.exec()) ?? [];
    const out: SharedSlot[] = [];
    names.forEach((key, i) => {
      const f = res[2 * i]?.[1] as (string | null)[] | undefined;
      const queued = Number(res[2 * i + 1]?.[1] ?? 0);
      if (!f || f[0] === null) return;
      const ov = Object.hasOwn(s.DOWNLOAD_SLOTS, key) ? s.DOWNLOAD_SLOTS[key] : undefined;
      const policy = decodePolicy(key, ov, s, f[0]!, f[1] ? Number(f[1]) : -Infinity);
      out.push({ key, policy, inFlight: Number(f[2] ?? 0), queued, readyAt: Number(f[3] ?? 0), concurrency: Number(f[4] ?? 0) });
    });
    return out;
  }

  /** The workers that ever joined, alive while their heartbeat key lives. */
  async workers(): Promise<(WorkerInfo & { readonly alive: boolean })[]> {
    const all = await this.r.hgetall(`${this.prefix}workers`);
    const names = Object.keys(all);
    const alive = names.length === 0 ? [] : await Promise.all(names.map((n) => this.r.pttl(`${this.prefix}hb:${n}`)));
    return names.map((n, i) => ({ ...(JSON.parse(all[n]!) as WorkerInfo), alive: (alive[i] ?? -2) > 0 && (alive[i] ?? 0) <= HEARTBEAT_TTL_MS }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}

export interface SharedSlot {
  readonly key: string;
  readonly policy: SlotPolicy;
  readonly inFlight: number;
  readonly queued: number;
  readonly readyAt: number;
  readonly concurrency: number;
}
