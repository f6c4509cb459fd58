// The crawl config file (C.json of the CLI, the GUI's new-crawl form): parsed and validated
// whole, with errors that name the field, the value and what is allowed.

import { isIP } from 'node:net';
import { applySettings, DEFAULT_SETTINGS, parseDecimal, type Settings, type SettingError } from '../../../shared/settings';
import { FOLLOW_SCOPES } from '../../../shared/types';
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP } from '../json-depth';
import { parseScopeRules, type ScopeRule } from './scopes';
import { parseSeedList, type FollowRules, type FollowScope, type SeedLineError } from './frontier';

export interface CrawlConfig {
  readonly name: string;
  readonly seeds: readonly string[];
  readonly seedErrors: readonly SeedLineError[];
  readonly follow: FollowRules;
  readonly settings: Settings;
  /** The settings as given (Scrapy names), kept with the crawl. */
  readonly settingsGiven: Readonly<Record<string, unknown>>;
  readonly resolve: Readonly<Record<string, string>>;
  /** Declarative scope rules (SPEC 5.1), in order. */
  readonly scopeRules: readonly ScopeRule[];
}

export interface ConfigError {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
}

export type ConfigResult =
  | { readonly ok: true; readonly config: CrawlConfig }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

const SCOPES: readonly FollowScope[] = FOLLOW_SCOPES;

/** A value as JSON, cut to 120 characters; never throws (a cycle or a value too deep to print). */
function show(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    s = undefined;
  }
  if (s === undefined) s = typeof v === 'object' && v !== null ? (Array.isArray(v) ? '[...]' : '{...}') : String(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

const HOST_ALLOWED = 'a host name, e.g. "example.com" or "bücher.example"';

/**
 * The form a host name takes in a URL, so a `resolve` key matches the request's host: lower case,
 * IDNA (punycode) for Unicode names. Null for anything but a bare host name (a port, a path, a
 * scheme, credentials, an IP literal in brackets).
 */
export function resolveHostKey(host: string): string | null {
  if (host === '' || /[\s/\\:@?#[\]%]/u.test(host)) return null;
  try {
    const u = new URL(`http://${host}/`);
    return u.hostname !== '' && u.port === '' && u.pathname === '/' ? u.hostname : null;
  } catch {
    return null;
  }
}

/** At most this many bad seed lines are spelled out in an error; the rest are counted. */
const SEED_ERRORS_SHOWN = 10;

function noValidSeed(errors: readonly SeedLineError[]): string {
  if (errors.length === 0) return 'seeds: no valid URL';
  if (errors.length <= SEED_ERRORS_SHOWN) return `seeds: no valid URL (${errors.map(describeSeedError).join('; ')})`;
  const first = errors.slice(0, SEED_ERRORS_SHOWN).map(describeSeedError).join('; ');
  const n = (x: number) => x.toLocaleString('en-US');
  return `seeds: no valid URL (${n(errors.length)} bad lines; the first ${SEED_ERRORS_SHOWN}: ${first}; and ${n(errors.length - SEED_ERRORS_SHOWN)} more)`;
}

/**
 * Validates a crawl config. `seedText` (one URL a line, e.g. from a seeds file) is added to
 * `seeds`. Bad seed lines are reported in `seedErrors` and skipped; no valid seed at all is an error,
 * except with `seedsOptional` (reading back a stored crawl that has none: an imported Scrapy log).
 */
export function parseCrawlConfig(input: unknown, seedText?: string, o: { readonly seedsOptional?: boolean } = {}): ConfigResult {
  const errors: ConfigError[] = [];
  const err = (field: string, value: unknown, allowed: string) =>
    errors.push({ field, value, message: `${field}: ${show(value)} is not allowed (${allowed})` });
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ field: '(config)', value: input, message: 'the crawl config must be a JSON object' }] };
  }
  const c = input as Record<string, unknown>;
  // Nothing below walks a value nested deeper than this (printing one would overflow the stack).
  for (const [k, v] of Object.entries(c)) {
    if (nestedDeeperThan(v, MAX_JSON_DEPTH - 1)) {
      errors.push({ field: k, value: null, message: `${k}: a value nested more than ${MAX_JSON_DEPTH - 1} levels deep is not allowed (a crawl config is ${TOO_DEEP})` });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const known = new Set(['name', 'seeds', 'follow', 'settings', 'resolve', 'scopes']);
  // `scrapy`: stored by the Scrapy bridge (core/scrapy/) with a spider's crawl; the engine never runs one.
  for (const k of Object.keys(c)) if (!known.has(k) && !(k === 'scrapy' && typeof c[k] === 'object')) err(k, c[k], `unknown field; known: ${[...known].join(', ')}`);

  let name = 'crawl';
  if (c.name !== undefined) {
    if (typeof c.name !== 'string' || c.name.trim() === '') err('name', c.name, 'a non-empty text');
    else name = c.name.trim();
  }

  // Each source is numbered on its own, so a bad line is reported where the user will find it.
  const parts: { urls: readonly string[]; errors: readonly SeedLineError[] }[] = [];
  if (c.seeds !== undefined) {
    if (typeof c.seeds === 'string' || (Array.isArray(c.seeds) && c.seeds.every((s) => typeof s === 'string'))) {
      parts.push(parseSeedList(c.seeds as string | string[], typeof c.seeds === 'string' ? 'config seeds line' : 'config seeds item'));
    } else {
      err('seeds', c.seeds, 'a list of URLs, or a text with one URL a line');
    }
  }
  if (seedText !== undefined) parts.push(parseSeedList(seedText, 'seeds file line'));
  const seeds = { urls: parts.flatMap((p) => p.urls), errors: parts.flatMap((p) => p.errors) };
  const noSeedsAllowed = o.seedsOptional === true && seeds.errors.length === 0 && (c.seeds === undefined || (Array.isArray(c.seeds) && c.seeds.length === 0));
  if (seeds.urls.length === 0 && !noSeedsAllowed && !errors.some((e) => e.field === 'seeds')) {
    errors.push({ field: 'seeds', value: c.seeds ?? null, message: noValidSeed(seeds.errors) });
  }

  let follow: FollowRules = { scope: 'host', maxDepth: Infinity, maxPages: Infinity, include: [], exclude: [] };
  if (c.follow !== undefined) {
    if (typeof c.follow !== 'object' || c.follow === null || Array.isArray(c.follow)) {
      err('follow', c.follow, 'an object {scope, max_depth, max_pages, include, exclude}');
    } else {
      const f = c.follow as Record<string, unknown>;
      const fk = new Set(['scope', 'max_depth', 'max_pages', 'include', 'exclude']);
      for (const k of Object.keys(f)) if (!fk.has(k)) err(`follow.${k}`, f[k], `unknown field; known: ${[...fk].join(', ')}`);
      let scope: FollowScope = 'host';
      if (f.scope !== undefined) {
        if (!SCOPES.includes(f.scope as FollowScope)) err('follow.scope', f.scope, `one of ${SCOPES.join(', ')}`);
        else scope = f.scope as FollowScope;
      }
      const limit = (key: string): number => {
        const v = f[key];
        if (v === undefined || v === null) return Infinity;
        const n = typeof v === 'string' ? parseDecimal(v, true) : v;
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
          err(`follow.${key}`, v, 'a whole number >= 0');
          return Infinity;
        }
        return n;
      };
      const regexes = (key: string): RegExp[] => {
        const v = f[key];
        if (v === undefined) return [];
        const list = typeof v === 'string' ? [v] : v;
        if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
          err(`follow.${key}`, v, 'a regular expression or a list of them');
          return [];
        }
        const out: RegExp[] = [];
        list.forEach((src: string, i: number) => {
          try {
            out.push(new RegExp(src));
          } catch (e) {
            err(`follow.${key}[${i}]`, src, `a valid regular expression: ${(e as Error).message}`);
          }
        });
        return out;
      };
      follow = { scope, maxDepth: limit('max_depth'), maxPages: limit('max_pages'), include: regexes('include'), exclude: regexes('exclude') };
    }
  }

  let settings: Settings | null = null;
  let settingsGiven: Record<string, unknown> = {};
  if (c.settings !== undefined) {
    const r = applySettings(c.settings);
    if (!r.ok) {
      for (const e of r.errors as SettingError[]) errors.push({ field: `settings.${e.setting}`, value: e.value, message: `settings.${e.message}` });
    } else {
      settings = r.settings;
      settingsGiven = { ...(c.settings as Record<string, unknown>) };
    }
  } else {
    settings = DEFAULT_SETTINGS;
  }

  // No prototype: a host named __proto__ or constructor is a host like any other.
  const resolve: Record<string, string> = Object.create(null);
  if (c.resolve !== undefined) {
    if (typeof c.resolve !== 'object' || c.resolve === null || Array.isArray(c.resolve)) {
      err('resolve', c.resolve, 'an object {host: IP address}');
    } else {
      // Keys in the form the request's URL has (punycode), so `bücher.test` is found for http://bücher.test/.
      for (const [host, ip] of Object.entries(c.resolve as Record<string, unknown>)) {
        const field = `resolve[${show(host)}]`;
        const key = resolveHostKey(host);
        if (key === null) errors.push({ field, value: host, message: `${field}: ${show(host)} is not allowed (${HOST_ALLOWED})` });
        else if (typeof ip !== 'string' || isIP(ip) === 0) err(field, ip, 'an IPv4 or IPv6 address');
        else resolve[key] = ip;
      }
    }
  }

  let scopeRules: ScopeRule[] = [];
  if (c.scopes !== undefined) {
    const r = parseScopeRules(c.scopes);
    scopeRules = r.rules;
    for (const message of r.errors) errors.push({ field: message.slice(0, message.indexOf(':')), value: c.scopes, message });
  }

  if (errors.length > 0 || !settings) return { ok: false, errors };
  return { ok: true, config: { name, seeds: seeds.urls, seedErrors: seeds.errors, follow, settings, settingsGiven, resolve, scopeRules } };
}

/** "seeds file line 2: not an absolute URL …" */
export function describeSeedError(e: SeedLineError): string {
  return `${e.source} ${e.line}: ${e.message}`;
}

/**
 * The config as JSON-safe input that parseCrawlConfig accepts again (without settings, which are
 * stored on their own): what a crawl keeps so it can be resumed or duplicated later.
 */
export function crawlConfigInput(c: CrawlConfig): Record<string, unknown> {
  const f = c.follow;
  return {
    name: c.name,
    seeds: c.seeds,
    follow: {
      scope: f.scope,
      ...(Number.isFinite(f.maxDepth) ? { max_depth: f.maxDepth } : {}),
      ...(Number.isFinite(f.maxPages) ? { max_pages: f.maxPages } : {}),
      include: f.include.map((r) => r.source),
      exclude: f.exclude.map((r) => r.source),
    },
    resolve: c.resolve,
    scopes: c.scopeRules,
  };
}
