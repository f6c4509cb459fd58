// Validates every request's params at the trust boundary (ARCHITECTURE: host), so handlers see
// well-typed values and a bad request gets an error naming the field, the value and what is allowed.

import { isAbsolute } from 'node:path';
import { EXPORT_EXTENSIONS, EXPORT_FORMATS, type ExportFormat, type Method, type Params } from '../../shared/contract';
import { parseTimeZone, TIME_ZONE_ALLOWED } from './store/export/wall-time';
import { EVENT_KINDS, type EventKind } from '../../shared/types';

export class Invalid extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

type P = Record<string, unknown>;

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

const validators: { [M in Method]: (p: P) => Params<M> } = {
  'crawls.list': () => ({}),
  'crawls.create': (p) => {
    if (typeof p.config !== 'object' || p.config === null || Array.isArray(p.config)) bad('config', p.config, 'a crawl config object');
    return { config: p.config, seedsText: optional<string>(p, 'seedsText', (v) => typeof v === 'string', 'a text, one URL a line') };
  },
  'crawls.duplicate': crawlRef,
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
  return validators[method](object(params)) as Params<M>;
}
