// A crawl's definition as files and as a form: every seed read page by page, the crawl config file
// the CLI runs (`slotscope crawl --config`), a text downloaded from the page, and the New crawl form's
// starting values for a copy edited before it starts.

import type { CrawlDefinition } from '../../../../shared/contract';
import { DEFAULT_SETTINGS, SETTINGS_SCHEMA, type ScopeSettings } from '../../../../shared/settings';
import type { ScopeRule } from '../../../../shared/types';
import type { Transport } from '../../transport/transport';
import { showValue } from '../setting-value';
import { sameSetting } from '../setting-words';

const PAGE = 50_000;

/** Every seed of a crawl, in order. */
export async function fetchAllSeeds(transport: Pick<Transport, 'invoke'>, crawlId: number): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const p = await transport.invoke('crawls.seeds', { id: crawlId, offset, limit: PAGE });
    out.push(...p.seeds);
    if (p.seeds.length < PAGE || out.length >= p.total) return out;
  }
}

/** Saves `text` as a file the browser downloads (no request to the host). */
export function downloadText(fileName: string, text: string, type = 'text/plain'): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The settings that differ from Scrapy's defaults, as a config file writes them. */
export function settingsGiven(s: CrawlDefinition['settings']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of SETTINGS_SCHEMA) if (!sameSetting(s[spec.name], DEFAULT_SETTINGS[spec.name])) out[spec.name] = s[spec.name];
  return out;
}

/** The crawl config file that makes this crawl again (`slotscope crawl --config FILE`). */
export function configFileOf(def: CrawlDefinition, seeds: readonly string[]): Record<string, unknown> {
  const f = def.follow;
  return {
    name: def.name,
    seeds,
    follow: {
      scope: f.scope,
      ...(f.maxDepth !== null ? { max_depth: f.maxDepth } : {}),
      ...(f.maxPages !== null ? { max_pages: f.maxPages } : {}),
      ...(f.include.length ? { include: f.include } : {}),
      ...(f.exclude.length ? { exclude: f.exclude } : {}),
    },
    settings: settingsGiven(def.settings),
    ...(Object.keys(def.resolve).length ? { resolve: def.resolve } : {}),
    ...(def.scopes.length ? { scopes: def.scopes } : {}),
  };
}

/** A throttling scope as a row of the form's table (text as typed; the rest of its settings as JSON). */
export interface ScopeRowDraft {
  readonly key: string;
  readonly concurrency: string;
  readonly delay: string;
  readonly target: string;
  readonly quota: string;
  readonly window: string;
  readonly rampup: boolean;
  readonly ignoreRobots: boolean;
  /** Backoff, jitter, AutoThrottle's other values, quota_header: JSON text, "" for none. */
  readonly more: string;
}

export const EMPTY_SCOPE_ROW: ScopeRowDraft = { key: '', concurrency: '', delay: '', target: '', quota: '', window: '', rampup: false, ignoreRobots: false, more: '' };

/** A THROTTLING_SCOPES entry as a table row. */
export function scopeRowOf(key: string, s: ScopeSettings): ScopeRowDraft {
  const { concurrency, delay, quota, window, rampup, ignore_robots_txt: ignore, autothrottle, ...rest } = s;
  const { target_concurrency: target, ...atRest } = autothrottle ?? {};
  const more: Record<string, unknown> = { ...rest, ...(Object.keys(atRest).length ? { autothrottle: atRest } : {}) };
  const n = (v: number | undefined) => (v === undefined ? '' : String(v));
  return {
    key, concurrency: n(concurrency), delay: n(delay), target: n(target), quota: n(quota), window: n(window), rampup: rampup === true,
    ignoreRobots: ignore === true, more: Object.keys(more).length ? JSON.stringify(more) : '',
  };
}

/** The rows as a THROTTLING_SCOPES map, or the first row's problem in words. */
export function scopesFromRows(rows: readonly ScopeRowDraft[]): { readonly value: Record<string, unknown>; readonly error: string | null } {
  const out: Record<string, unknown> = {};
  for (const [i, r] of rows.entries()) {
    const key = r.key.trim();
    if (key === '' && JSON.stringify({ ...r, key: '' }) === JSON.stringify(EMPTY_SCOPE_ROW)) continue;
    const at = `Throttling scopes, row ${i + 1}`;
    if (key === '') return { value: out, error: `${at}: give the scope (a host, a slot or a scope name)` };
    if (Object.hasOwn(out, key)) return { value: out, error: `${at}: ${key} is already in the table` };
    const entry: Record<string, unknown> = {};
    const num = (text: string, field: string): boolean => {
      const t = text.trim();
      if (t === '') return true;
      const v = Number(t);
      if (!Number.isFinite(v) || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return false;
      entry[field] = v;
      return true;
    };
    if (!num(r.concurrency, 'concurrency')) return { value: out, error: `${at}: concurrency “${r.concurrency}” is not a number` };
    if (!num(r.delay, 'delay')) return { value: out, error: `${at}: delay “${r.delay}” is not a number of seconds` };
    if (!num(r.quota, 'quota')) return { value: out, error: `${at}: quota “${r.quota}” is not a number` };
    if (!num(r.window, 'window')) return { value: out, error: `${at}: window “${r.window}” is not a number of seconds` };
    if (r.rampup) entry.rampup = true;
    if (r.ignoreRobots) entry.ignore_robots_txt = true;
    let more: Record<string, unknown> = {};
    if (r.more.trim() !== '') {
      try {
        const v = JSON.parse(r.more) as unknown;
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return { value: out, error: `${at}: more settings must be a JSON object` };
        more = v as Record<string, unknown>;
      } catch (e) {
        return { value: out, error: `${at}: more settings are not valid JSON (${e instanceof Error ? e.message : String(e)})` };
      }
    }
    const target = r.target.trim();
    const at2 = { ...((more.autothrottle as Record<string, unknown> | undefined) ?? {}) };
    if (target !== '') {
      const v = Number(target);
      if (!Number.isFinite(v)) return { value: out, error: `${at}: AutoThrottle target “${r.target}” is not a number` };
      at2.target_concurrency = v;
    }
    const { autothrottle: _, ...restMore } = more;
    out[key] = { ...entry, ...restMore, ...(Object.keys(at2).length ? { autothrottle: at2 } : {}) };
  }
  return { value: out, error: null };
}

/** A scope rule as the form edits it. */
export interface RuleDraft {
  readonly by: ScopeRule['by'];
  /** The prefix (prefix rules) or the query parameter (query rules). */
  readonly arg: string;
  /** The scope's name (prefix rules) or "domain"/"host" (query rules). */
  readonly name: string;
}

export function ruleDraftOf(r: ScopeRule): RuleDraft {
  switch (r.by) {
    case 'prefix': return { by: 'prefix', arg: r.prefix, name: r.scope ?? '' };
    case 'query': return { by: 'query', arg: r.param, name: r.then ?? '' };
    default: return { by: r.by, arg: '', name: '' };
  }
}

/** The drafts as the config's scope rules (the host checks them whole on Create). */
export function rulesFromDrafts(drafts: readonly RuleDraft[]): ScopeRule[] {
  return drafts.map((d): ScopeRule => {
    if (d.by === 'prefix') return d.name.trim() ? { by: 'prefix', prefix: d.arg.trim(), scope: d.name.trim() } : { by: 'prefix', prefix: d.arg.trim() };
    if (d.by === 'query') return d.name === 'domain' || d.name === 'host' ? { by: 'query', param: d.arg.trim(), then: d.name } : { by: 'query', param: d.arg.trim() };
    return { by: d.by };
  });
}

/** Seed lists up to this many lines are put in the form to edit; longer ones are kept by reference. */
export const SEED_PREFILL_MAX = 5000;

/** What the New crawl form starts from when it makes an edited copy of a crawl. */
export interface FormPrefill {
  readonly name: string;
  readonly seeds: string;
  /** Seeds kept by reference (a long list, never sent to the page): the crawl and how many. */
  readonly seedsFrom: { readonly crawlId: number; readonly count: number; readonly name: string } | null;
  readonly scope: CrawlDefinition['follow']['scope'];
  readonly maxDepth: string;
  readonly maxPages: string;
  readonly include: string;
  readonly exclude: string;
  readonly rules: readonly RuleDraft[];
  readonly resolve: string;
  /** Per setting that differs from the defaults: its value as the form's field shows it. */
  readonly drafts: Readonly<Record<string, string>>;
  readonly scopes: readonly ScopeRowDraft[];
}

export function prefillOf(def: CrawlDefinition, seeds: readonly string[] | null): FormPrefill {
  const drafts: Record<string, string> = {};
  for (const [name, v] of Object.entries(settingsGiven(def.settings))) {
    if (name === 'THROTTLING_SCOPES') continue;
    drafts[name] = showValue(v);
  }
  const f = def.follow;
  return {
    name: `${def.name} (copy)`,
    seeds: seeds === null ? '' : seeds.join('\n'),
    seedsFrom: seeds === null && def.seedCount > 0 ? { crawlId: def.id, count: def.seedCount, name: def.name } : null,
    scope: f.scope,
    maxDepth: f.maxDepth === null ? '' : String(f.maxDepth),
    maxPages: f.maxPages === null ? '' : String(f.maxPages),
    include: f.include.join('\n'),
    exclude: f.exclude.join('\n'),
    rules: def.scopes.map(ruleDraftOf),
    resolve: Object.keys(def.resolve).length ? JSON.stringify(def.resolve, null, 1) : '',
    drafts,
    scopes: Object.entries(def.settings.THROTTLING_SCOPES).map(([k, s]) => scopeRowOf(k, s)),
  };
}
