// Settings in words, for people rather than config files: "on", "0.30 s", "429, 503", a throttling
// scope as "concurrency 2, delay 0.50 s, rampup": one place for the Crawl view, the journal and the
// marks on the charts, so none of them shows JSON or an internal name.

import { SETTINGS_SCHEMA, settingSpec, type Randomize, type ScopeSettings, type SettingName } from '../../../shared/settings';

/** Seconds: "0.3 s", "12 s", "1 h 05 min" for long ones. */
export function secondsWords(s: number): string {
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.round((s % 3600) / 60)).padStart(2, '0')} min`;
  if (s >= 120) return `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`;
  return `${Number(s.toFixed(3))} s`;
}

/** The settings whose values are seconds (their labels say "(s)"). */
const SECONDS: ReadonlySet<string> = new Set(SETTINGS_SCHEMA.filter((s) => s.label.endsWith('(s)')).map((s) => s.name));

/** A setting's friendly label without its unit ("Delay between requests"), or its name when unknown. */
export function settingLabel(name: string): string {
  const spec = settingSpec(name);
  return spec ? spec.label.replace(/\s*\((s|bytes)\)$/, '') : name;
}

function randomizeWords(r: Randomize): string {
  if (r === false) return 'off';
  if (typeof r === 'number') return `×${Number((1 - r).toFixed(3))}–${Number((1 + r).toFixed(3))}`;
  return `×${Number((1 + r[0]).toFixed(3))}–${Number((1 + r[1]).toFixed(3))}`;
}

/** One throttling scope's settings in words. */
export function scopeWords(s: ScopeSettings): string {
  const parts: string[] = [];
  if (s.concurrency !== undefined) parts.push(`concurrency ${s.concurrency}`);
  if (s.delay !== undefined) parts.push(`delay ${secondsWords(s.delay)}`);
  if (s.jitter !== undefined) parts.push(`jitter ${randomizeWords(s.jitter)}`);
  if (s.rampup) parts.push('rampup');
  if (s.quota !== undefined) parts.push(`quota ${s.quota} per ${secondsWords(s.window ?? 60)}`);
  else if (s.window !== undefined) parts.push(`window ${secondsWords(s.window)}`);
  if (s.quota_header) parts.push(`cost from ${s.quota_header}`);
  const at = s.autothrottle;
  if (at) {
    const a: string[] = [];
    if (at.enabled !== undefined) a.push(at.enabled ? 'on' : 'off');
    if (at.target_concurrency !== undefined) a.push(`target ${at.target_concurrency}`);
    if (at.start_delay !== undefined) a.push(`start ${secondsWords(at.start_delay)}`);
    if (at.max_delay !== undefined) a.push(`max ${secondsWords(at.max_delay)}`);
    parts.push(`AutoThrottle ${a.join(', ')}`);
  }
  const b = s.backoff;
  if (b) {
    const a: string[] = [];
    if (b.http_codes) a.push(b.http_codes.length === 0 ? 'no statuses' : `on ${b.http_codes.join(', ')}`);
    if (b.exceptions) a.push(b.exceptions.length === 0 ? 'no errors' : `on ${b.exceptions.join(', ')}`);
    if (b.delay_factor !== undefined) a.push(`×${b.delay_factor}`);
    if (b.min_delay !== undefined) a.push(`from ${secondsWords(b.min_delay)}`);
    if (b.max_delay !== undefined) a.push(`up to ${secondsWords(b.max_delay)}`);
    if (b.window !== undefined) a.push(`recovers after ${secondsWords(b.window)}`);
    if (b.jitter !== undefined) a.push(`jitter ${randomizeWords(b.jitter)}`);
    parts.push(`backoff ${a.join(', ')}`);
  }
  if (s.ignore_robots_txt) parts.push('ignores robots.txt Crawl-delay');
  return parts.length === 0 ? 'defaults' : parts.join(', ');
}

/** A per-slot override (DOWNLOAD_SLOTS) in words. */
function slotOverrideWords(o: { concurrency?: number; delay?: number; randomize_delay?: boolean }): string {
  const parts: string[] = [];
  if (o.concurrency !== undefined) parts.push(`concurrency ${o.concurrency}`);
  if (o.delay !== undefined) parts.push(`delay ${secondsWords(o.delay)}`);
  if (o.randomize_delay !== undefined) parts.push(`randomized ${o.randomize_delay ? 'on' : 'off'}`);
  return parts.length === 0 ? 'defaults' : parts.join(', ');
}

/** A map setting's entries in words: "api.example.com: concurrency 2, delay 0.50 s; b.test: rampup". */
function mapWords(name: string, v: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(v);
  if (keys.length === 0) return 'none';
  const each = (k: string) => (name === 'THROTTLING_SCOPES' ? scopeWords(v[k] as ScopeSettings) : slotOverrideWords(v[k] as Record<string, never>));
  return keys.map((k) => `${k}: ${each(k)}`).join('; ');
}

/** A setting's value in words. */
export function valueWords(name: string, v: unknown): string {
  if (v === undefined || v === null) return 'none';
  if (name === 'RANDOMIZE_DOWNLOAD_DELAY' || name === 'BACKOFF_JITTER') return randomizeWords(v as Randomize);
  if (name === 'THROTTLING_SCOPES' || name === 'DOWNLOAD_SLOTS') return typeof v === 'object' ? mapWords(name, v as Record<string, unknown>) : String(v);
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (typeof v === 'number') {
    if (SECONDS.has(name)) return secondsWords(v);
    if ((name === 'CONCURRENT_REQUESTS' || name === 'DOWNLOAD_MAXSIZE' || name === 'DOWNLOAD_WARNSIZE') && v === 0) return 'no limit';
    return String(v);
  }
  if (typeof v === 'string') return v === '' ? 'none' : v;
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.length === 2 && name === 'RAMPUP_BACKOFF_TARGET' ? `${v[0]} to ${v[1]}` : v.join(', ');
  return Object.keys(v as object).length === 0 ? 'none' : mapWords(name, v as Record<string, unknown>);
}

/** Whether two values of a setting are the same (maps and lists by content). */
export function sameSetting(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

export type { SettingName };
