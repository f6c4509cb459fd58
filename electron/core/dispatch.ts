// Validates every request's params at the trust boundary (ARCHITECTURE: host), so handlers see
// well-typed values and a bad request gets an error naming the field, the value and what is allowed.

import { isAbsolute } from 'node:path';
import {
  EXPORT_EXTENSIONS, EXPORT_FORMATS, REQUEST_CLASSES, REQUEST_ORDERS,
  type ExportFormat, type Method, type Params, type RequestClass, type RequestCursor, type RequestFilter, type RequestOrder,
} from '../../shared/contract';
import { parseTimeZone, TIME_ZONE_ALLOWED } from './store/export/wall-time';
import { CHOSEN_BY_USER } from './store/export/exporter';
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP } from './json-depth';
import { EVENT_KINDS, FAILURE_KINDS, type EventKind, type FailureKind } from '../../shared/types';

export class Invalid extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

type P = Record<string | symbol, unknown>;

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

function bad(field: string, v: unknown, allowed: string): never {
  throw new Invalid(field, `${field}: ${show(v)} is not allowed (${allowed})`);
}

function object(v: unknown): P {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) bad('params', v, 'an object');
  return v as P;
}

function id(p: P): number {
  const v = p.id;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) bad('id', v, 'a crawl id, a whole number >= 1');
  return v as number;
}

function slot(p: P): string {
  const v = p.slot;
  if (typeof v !== 'string' || v === '' || v.length > 2048) bad('slot', v, 'a slot key');
  return v as string;
}

function optional<T>(p: P, field: string, check: (v: unknown) => boolean, allowed: string): T | undefined {
  const v = p[field];
  if (v === undefined) return undefined;
  if (!check(v)) bad(field, v, allowed);
  return v as T;
}

const isTime = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const nullableNumber = (p: P, field: string, check: (n: number) => boolean, allowed: string) => {
  const v = p[field];
  if (v === null) return null;
  if (typeof v !== 'number' || !check(v)) bad(field, v, `${allowed}, or null to clear`);
  return v as number;
};

const crawlRef = (p: P) => ({ id: id(p) });
const crawlIdOf = (p: P): number => {
  const v = p.crawlId;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) bad('crawlId', v, 'a crawl id, a whole number >= 1');
  return v as number;
};
/** Points a history or scatter query may return. */
const maxPoints = (p: P) => optional<number>(p, 'maxPoints', (v) => Number.isInteger(v) && (v as number) >= 10 && (v as number) <= 100_000, 'a whole number from 10 to 100000');
const slotRef = (p: P) => ({ id: id(p), slot: slot(p) });

const isCursor = (v: unknown) =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && Number.isFinite(v[0]) && Number.isInteger(v[1]) && (v[1] as number) >= 0;
const CURSOR = 'a row cursor [t, id]: a time in epoch ms and a row id';

/** The Requests tab's filters: each one checked, unknown keys refused. */
function requestFilter(v: unknown): RequestFilter | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) bad('filter', v, 'an object {statusClass, slot, errorKind, text}');
  const f = v as P;
  for (const k of Object.keys(f)) if (!['statusClass', 'slot', 'errorKind', 'text'].includes(k)) bad(`filter.${k}`, f[k], 'unknown filter; known: statusClass, slot, errorKind, text');
  const pick = <T>(k: string, check: (x: unknown) => boolean, allowed: string): T | undefined => {
    const x = f[k];
    if (x === undefined || x === null) return undefined;
    if (!check(x)) bad(`filter.${k}`, x, allowed);
    return x as T;
  };
  const statusClass = pick<RequestClass>('statusClass', (x) => (REQUEST_CLASSES as readonly unknown[]).includes(x), REQUEST_CLASSES.join(', '));
  const slotKey = pick<string>('slot', (x) => typeof x === 'string' && x !== '' && x.length <= 2048, 'a slot key');
  const errorKind = pick<FailureKind>('errorKind', (x) => (FAILURE_KINDS as readonly unknown[]).includes(x), FAILURE_KINDS.join(', '));
  const text = pick<string>('text', (x) => typeof x === 'string' && x.length <= 2048, 'a text of up to 2048 characters');
  return {
    ...(statusClass !== undefined ? { statusClass } : {}), ...(slotKey !== undefined ? { slot: slotKey } : {}),
    ...(errorKind !== undefined ? { errorKind } : {}), ...(text ? { text } : {}),
  };
}

const validators: { [M in Method]: (p: P) => Params<M> } = {
  'crawls.list': () => ({}),
  'crawls.create': (p) => {
    if (typeof p.config !== 'object' || p.config === null || Array.isArray(p.config)) bad('config', p.config, 'a crawl config object');
    return {
      config: p.config, seedsText: optional<string>(p, 'seedsText', (v) => typeof v === 'string', 'a text, one URL a line'),
      seedsFrom: optional<number>(p, 'seedsFrom', (v) => Number.isInteger(v) && (v as number) >= 1, 'a crawl id, a whole number >= 1'),
    };
  },
  'crawls.duplicate': (p) => ({ id: id(p), seedsText: optional<string>(p, 'seedsText', (v) => typeof v === 'string', 'a text, one URL a line') }),
  'crawls.start': crawlRef,
  'crawls.pause': crawlRef,
  'crawls.resume': crawlRef,
  'crawls.stop': crawlRef,
  'crawls.delete': crawlRef,
  'crawls.stats': crawlRef,
  'settings.schema': () => ({}),
  'settings.get': crawlRef,
  'settings.update': (p) => {
    const changes = p.changes;
    if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) bad('changes', changes, 'an object of SETTING_NAME: value');
    return { id: id(p), changes: changes as Record<string, unknown> };
  },
  'slots.pause': slotRef,
  'slots.resume': slotRef,
  'slots.pinDelay': (p) => ({ ...slotRef(p), seconds: nullableNumber(p, 'seconds', (n) => Number.isFinite(n) && n >= 0, 'a number of seconds >= 0') }),
  'slots.pinConcurrency': (p) => ({ ...slotRef(p), value: nullableNumber(p, 'value', (n) => Number.isInteger(n) && n >= 1, 'a whole number >= 1') }),
  'slots.clearPins': slotRef,
  'slots.resetBackoff': slotRef,
  'slots.snapshot': crawlRef,
  'slots.history': (p) => ({
    id: id(p),
    slot: optional<string>(p, 'slot', (v) => typeof v === 'string' && v !== '', 'a slot key'),
    resolution: optional<'second' | 'minute'>(p, 'resolution', (v) => v === 'second' || v === 'minute', '"second" or "minute"'),
    from: optional<number>(p, 'from', isTime, 'a time in epoch ms'),
    to: optional<number>(p, 'to', isTime, 'a time in epoch ms'),
    maxPoints: maxPoints(p),
  }),
  'slots.responses': (p) => ({
    crawlId: crawlIdOf(p),
    slot: slot(p),
    from: optional<number>(p, 'from', isTime, 'a time in epoch ms'),
    to: optional<number>(p, 'to', isTime, 'a time in epoch ms'),
    maxPoints: maxPoints(p),
  }),
  'requests.page': (p) => ({
    crawlId: crawlIdOf(p),
    order: optional<RequestOrder>(p, 'order', (v) => (REQUEST_ORDERS as readonly unknown[]).includes(v), REQUEST_ORDERS.join(' or ')),
    filter: requestFilter(p.filter),
    after: optional<RequestCursor>(p, 'after', isCursor, CURSOR),
    until: optional<RequestCursor>(p, 'until', isCursor, CURSOR),
    offset: optional<number>(p, 'offset', (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1e9, 'a whole number from 0 to 1000000000'),
    limit: optional<number>(p, 'limit', (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 500, 'a whole number from 1 to 500'),
    count: optional<boolean>(p, 'count', (v) => typeof v === 'boolean', 'true or false'),
  }),
  'slots.queue': (p) => ({
    ...slotRef(p),
    limit: optional<number>(p, 'limit', (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1000, 'a whole number from 1 to 1000'),
  }),
  'crawls.scrapyStats': crawlRef,
  'crawls.workers': crawlRef,
  'crawls.definition': crawlRef,
  'crawls.seeds': (p) => ({
    id: id(p),
    offset: optional<number>(p, 'offset', (v) => Number.isInteger(v) && (v as number) >= 0, 'a whole number >= 0'),
    limit: optional<number>(p, 'limit', (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 50_000, 'a whole number from 1 to 50000'),
  }),
  'store.retention.get': () => ({}),
  // Values are checked whole against the current settings by the handler (store/retention.ts).
  'store.retention.set': (p) => p as Params<'store.retention.set'>,
  'history.whatIf': (p) => {
    const settings = p.settings;
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) bad('settings', settings, 'an object of SETTING_NAME: value');
    return {
      crawlId: crawlIdOf(p),
      slot: optional<string>(p, 'slot', (v) => typeof v === 'string' && v !== '' && v.length <= 2048, 'a slot key'),
      settings: settings as Record<string, unknown>,
    };
  },
  'log.events': (p) => ({
    id: id(p),
    kind: optional<EventKind>(p, 'kind', (v) => (EVENT_KINDS as readonly unknown[]).includes(v), EVENT_KINDS.join(', ')),
    slot: optional<string>(p, 'slot', (v) => typeof v === 'string' && v !== '', 'a slot key'),
    limit: optional<number>(p, 'limit', (v) => Number.isInteger(v) && (v as number) >= 1, 'a whole number >= 1'),
  }),
  'log.changes': (p) => ({ id: id(p), slot: optional<string>(p, 'slot', (v) => typeof v === 'string' && v !== '', 'a slot key') }),
  'history.export': (p) => {
    const crawlId = p.crawlId;
    if (typeof crawlId !== 'number' || !Number.isInteger(crawlId) || crawlId < 1) bad('crawlId', crawlId, 'a crawl id, a whole number >= 1');
    const format = p.format as ExportFormat;
    if (!EXPORT_FORMATS.includes(format)) bad('format', format, EXPORT_FORMATS.join(', '));
    const from = optional<number>(p, 'from', isTime, 'a time in epoch ms');
    const to = optional<number>(p, 'to', isTime, 'a time in epoch ms');
    if (from !== undefined && to !== undefined && from >= to) bad('to', to, `a time after from (${from}); the range is [from, to)`);
    const exts = EXPORT_EXTENSIONS[format];
    const path = optional<string>(p, 'path', (v) => typeof v === 'string' && v.length <= 4096 && !v.includes('\0') && isAbsolute(v)
      && exts.some((e) => v.toLowerCase().endsWith(e)), `an absolute file path ending with ${exts.join(' or ')}`);
    return {
      crawlId: crawlId as number, format, from, to, path,
      slot: optional<string>(p, 'slot', (v) => typeof v === 'string' && v !== '' && v.length <= 2048, 'a slot key'),
      exportId: optional<string>(p, 'exportId', (v) => typeof v === 'string' && /^[\w.-]{1,64}$/.test(v), '1 to 64 letters, digits, _, . or -'),
      // The desktop app's save dialog chose this path in the main process (a Symbol key crosses neither IPC nor JSON).
      ...(path !== undefined && p[CHOSEN_BY_USER] === path ? { [CHOSEN_BY_USER]: path } : {}),
    };
  },
  'history.importScrapyLog': (p) => ({
    name: (typeof p.name === 'string' && p.name.trim() !== '' && p.name.length <= 255 ? p.name.trim() : bad('name', p.name, "the log file's name, 1 to 255 characters")),
    text: typeof p.text === 'string' ? p.text : bad('text', p.text, "the log's text, a string"),
    tz: optional<string>(p, 'tz', (v) => typeof v === 'string' && parseTimeZone(v) !== null, TIME_ZONE_ALLOWED),
  }),
};

/** The params of `method`, checked; throws Invalid naming the field. */
export function validateParams<M extends Method>(method: M, params: unknown): Params<M> {
  // Nothing below walks a request nested deeper than this (printing one would overflow the stack).
  if (nestedDeeperThan(params, MAX_JSON_DEPTH)) {
    throw new Invalid('params', `params: a request nested more than ${MAX_JSON_DEPTH} levels deep is not allowed (a request is ${TOO_DEEP})`);
  }
  return validators[method](object(params)) as Params<M>;
}
