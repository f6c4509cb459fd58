// Which throttling scopes a request belongs to beyond its slot (SPEC 5.1): meta
// throttling_scopes, declarative rules of the crawl config, and a plug-in module.

import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve as resolvePath, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { registrableDomain, hostOf } from './frontier';

import type { ScopeRule } from '../../../shared/types';

/** A declarative scope rule of the crawl config, evaluated in order (declared once, in shared/types.ts). */
export type { ScopeRule };

/** Scope keys and expected costs, as collected for one request. */
export interface ScopeSet {
  readonly keys: string[];
  costs: Record<string, number> | null;
}

export const SCOPE_RULE_HELP = '{"by": "domain"}, {"by": "host"}, {"by": "prefix", "prefix": URL, "scope"?: name}, or {"by": "query", "param": name, "then"?: "domain"|"host"}';

/** Validates the config's `scopes` list; returns rules or error messages naming the item. */
export function parseScopeRules(v: unknown): { rules: ScopeRule[]; errors: string[] } {
  const errors: string[] = [];
  const rules: ScopeRule[] = [];
  if (!Array.isArray(v)) return { rules, errors: [`scopes: ${JSON.stringify(v)} is not allowed (a list of rules: ${SCOPE_RULE_HELP})`] };
  v.forEach((raw, i) => {
    const at = `scopes[${i}]`;
    const bad = (what: string) => errors.push(`${at}: ${JSON.stringify(raw)} is not allowed (${what})`);
    if (typeof raw !== 'object' || raw === null) return bad(SCOPE_RULE_HELP);
    const r = raw as Record<string, unknown>;
    const keys = Object.keys(r);
    const only = (allowed: string[]) => keys.every((k) => allowed.includes(k));
    switch (r.by) {
      case 'domain':
      case 'host':
        if (!only(['by'])) return bad(`a "${r.by}" rule takes no other keys`);
        rules.push({ by: r.by });
        return;
      case 'prefix':
        if (!only(['by', 'prefix', 'scope'])) return bad('a "prefix" rule takes prefix and scope');
        if (typeof r.prefix !== 'string' || !/^https?:\/\/[^/]+/.test(r.prefix)) return bad('"prefix" must be an absolute http(s) URL prefix');
        if (r.scope !== undefined && (typeof r.scope !== 'string' || r.scope === '')) return bad('"scope" must be a non-empty name');
        rules.push({ by: 'prefix', prefix: r.prefix, scope: r.scope as string | undefined });
        return;
      case 'query':
        if (!only(['by', 'param', 'then'])) return bad('a "query" rule takes param and then');
        if (typeof r.param !== 'string' || r.param === '') return bad('"param" must be a query parameter name');
        if (r.then !== undefined && r.then !== 'domain' && r.then !== 'host') return bad('"then" must be "domain" or "host"');
        rules.push({ by: 'query', param: r.param, then: r.then as 'domain' | 'host' | undefined });
        return;
      default:
        return bad(SCOPE_RULE_HELP);
    }
  });
  return { rules, errors };
}

/** Adds scopes (and costs) from a `throttling_scopes`-like value: a string, a list, or a map scope → cost. */
export function addScopes(set: ScopeSet, v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v === 'string') {
    if (v !== '' && !set.keys.includes(v)) set.keys.push(v);
    return;
  }
  if (Array.isArray(v) || v instanceof Set) {
    for (const k of v) addScopes(set, k);
    return;
  }
  if (typeof v === 'object') {
    for (const [k, cost] of Object.entries(v as Record<string, unknown>)) {
      addScopes(set, k);
      const n = Number(cost);
      // No prototype: a scope named __proto__ keeps its cost (it would set the prototype of {}).
      if (Number.isFinite(n) && n >= 0) (set.costs ??= Object.create(null) as Record<string, number>)[k] = n;
    }
  }
}

/** The scopes the config's rules give a URL. */
export function ruleScopes(rules: readonly ScopeRule[], u: URL, set: ScopeSet): void {
  for (const r of rules) {
    switch (r.by) {
      case 'domain':
        addScopes(set, registrableDomain(hostOf(u)));
        break;
      case 'host':
        addScopes(set, hostOf(u));
        break;
      case 'prefix':
        if (u.href.startsWith(r.prefix)) addScopes(set, r.scope ?? r.prefix);
        break;
      case 'query': {
        const target = u.searchParams.get(r.param);
        if (!target) break;
        try {
          const t = new URL(target);
          addScopes(set, r.then === 'host' ? hostOf(t) : registrableDomain(hostOf(t)));
        } catch {
          /* not a URL: no scope */
        }
        break;
      }
    }
  }
}

/** What the plug-in module (THROTTLING_MANAGER) may export. */
export interface ThrottlingManager {
  getScopes?(request: { url: string; method: string; meta: Readonly<Record<string, unknown>>; depth: number }): unknown;
  getResponseBackoff?(response: { url: string; status: number | null; errorKind: string | null; headers: Readonly<Record<string, string | string[]>>; scopes: readonly string[] }): unknown;
}

export class PluginError extends Error {}

/**
 * THROTTLING_MANAGER as set from the console (the app's settings and new-crawl form, over IPC or
 * the WebSocket), where a token is all it takes: only a module inside `pluginsDir` (the data
 * folder's plugins/), named by a path relative to it or in full, symbolic links followed. Returns
 * the module's full path ("" for none), or throws a PluginError naming the setting, the value and
 * the folder. The CLI's config file is the user's own and keeps loadThrottlingManager's rule.
 */
export function consolePluginPath(value: string, pluginsDir: string): string {
  if (value === '') return '';
  const fail = (what: string) => new PluginError(
    `THROTTLING_MANAGER: ${JSON.stringify(value)} is not allowed (set from the app, an ES module inside ${pluginsDir}, by its name there or its full path): ${what}`);
  const file = isAbsolute(value) ? value : resolvePath(pluginsDir, value);
  let root: string;
  let real: string;
  try {
    root = realpathSync(pluginsDir);
  } catch {
    throw fail(`there is no folder ${pluginsDir}; create it and put the module there`);
  }
  try {
    real = realpathSync(file);
  } catch {
    throw fail(`${file} does not exist`);
  }
  const rel = relative(root, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw fail(`${file} is not inside that folder`);
  if (!statSync(real).isFile()) throw fail(`${file} is not a file`);
  return real;
}

/** Loads THROTTLING_MANAGER; errors name the setting, the path and what is wrong. */
export async function loadThrottlingManager(path: string, baseDir = process.cwd()): Promise<ThrottlingManager> {
  const file = isAbsolute(path) ? path : resolvePath(baseDir, path);
  const fail = (what: string) => new PluginError(`THROTTLING_MANAGER: ${JSON.stringify(path)} is not allowed (an ES module exporting getScopes(request)): ${what}`);
  try {
    if (!statSync(file).isFile()) throw fail(`${file} is not a file`);
  } catch (e) {
    if (e instanceof PluginError) throw e;
    throw fail(`${file} does not exist or cannot be read`);
  }
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (e) {
    throw fail(`it failed to load: ${(e as Error).message}`);
  }
  if (typeof mod.getScopes !== 'function') throw fail('it has no getScopes export');
  if (mod.getResponseBackoff !== undefined && typeof mod.getResponseBackoff !== 'function') throw fail('getResponseBackoff is not a function');
  return mod as ThrottlingManager;
}
