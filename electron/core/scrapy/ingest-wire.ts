// The batches the slotscope-scrapy extension POSTs to /ingest/scrapy, and their validation: a batch
// is checked whole before anything of it is applied, and refused naming the field and what is allowed.
// The Python side of the same format is integrations/scrapy/slotscope_scrapy/protocol.py.

import { DELAY_CAUSES, FAILURE_KINDS, type DelayCause, type FailureKind } from '../../../shared/types';

export const PROTOCOL_VERSION = 1;

/** Fields of one response or failed download, in tuple order (protocol.py RESPONSE_FIELDS). */
export const RESPONSE_FIELDS = [
  't', 'startedAt', 'waitMs', 'slot', 'url', 'method', 'status', 'latency', 'downloadTime', 'bytes', 'inFlight',
  'delayBefore', 'delayAfter', 'delayCause', 'depth', 'contentType', 'attempt', 'errorKind', 'errorMessage', 'debug',
] as const;

/** Fields of one downloader slot as it stands, in tuple order (protocol.py SLOT_FIELDS). */
export const SLOT_FIELDS = [
  'key', 'transferring', 'queued', 'active', 'delay', 'concurrency', 'randomize', 'paused', 'pinDelay', 'pinConcurrency', 'nextStartAt',
] as const;

/** One download as the bridge saw it (ResponseRecord's fields, plus whether Scrapy printed its AUTOTHROTTLE_DEBUG line). */
export interface WireResponse {
  readonly t: number;
  readonly startedAt: number;
  readonly waitMs: number;
  readonly slot: string;
  readonly url: string;
  readonly method: string;
  readonly status: number | null;
  readonly latency: number | null;
  readonly downloadTime: number | null;
  readonly bytes: number;
  readonly inFlight: number;
  readonly delayBefore: number;
  readonly delayAfter: number;
  readonly delayCause: DelayCause;
  readonly depth: number;
  readonly contentType: string | null;
  readonly attempt: number;
  readonly errorKind: FailureKind | null;
  readonly errorMessage: string | null;
  /** True when Scrapy's AutoThrottle logged its debug line for this response. */
  readonly debug: boolean;
}

/** A downloader slot: what is in flight and waiting, its delay and concurrency, its pause and pins. */
export interface WireSlot {
  readonly key: string;
  /** Requests being downloaded (slot.transferring). */
  readonly transferring: number;
  /** Requests waiting in the slot's queue. */
  readonly queued: number;
  /** Requests in the downloader for this slot, queued and transferring (slot.active). */
  readonly active: number;
  readonly delay: number;
  readonly concurrency: number;
  readonly randomize: boolean;
  readonly paused: boolean;
  readonly pinDelay: number | null;
  readonly pinConcurrency: number | null;
  /** When the next queued request may start (epoch ms), null when none waits or the slot is held. */
  readonly nextStartAt: number | null;
}

/** Sent until Slotscope has accepted one batch of the session: who is crawling, with what. */
export interface WireOpen {
  readonly spider: string;
  readonly scrapyVersion: string;
  readonly bridgeVersion: string;
  readonly python: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly startUrls: readonly string[];
  /** The crawl's settings under Slotscope's (Scrapy's) names, as the crawl runs with them. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Scrapy's "Overridden settings", JSON-safe. */
  readonly overridden: Readonly<Record<string, unknown>>;
  readonly autothrottle: boolean;
}

export interface WireEvent {
  readonly t: number;
  readonly kind: 'info' | 'warning' | 'error';
  readonly code: string;
  readonly text: string;
  readonly slot: string | null;
}

/** One change a command made: slot (null for the crawl), name, old and new value. */
export type WireChange = readonly [slot: string | null, setting: string, oldValue: unknown, newValue: unknown];

/** The bridge's answer to a command: applied (with the changes it made) or refused in words. */
export interface WireAck {
  readonly id: string;
  readonly ok: boolean;
  readonly at: number;
  readonly message: string | null;
  readonly changes: readonly WireChange[];
}

export interface WireState {
  readonly paused: boolean;
  readonly held: boolean;
  readonly inFlight: number;
  readonly scheduled: number | null;
}

export interface WireClose {
  readonly t: number;
  readonly reason: string;
  readonly stats: Readonly<Record<string, unknown>>;
  /** Records the bridge could not send (dropped while Slotscope was unreachable, or refused). */
  readonly unsent: number;
}

export interface Batch {
  readonly session: string;
  readonly seq: number;
  readonly open: WireOpen | null;
  readonly responses: readonly WireResponse[];
  readonly events: readonly WireEvent[];
  readonly acks: readonly WireAck[];
  readonly slots: readonly WireSlot[];
  readonly gone: readonly string[];
  readonly state: WireState | null;
  readonly dropped: number;
  readonly close: WireClose | null;
}

/** A batch refused whole; `message` names the field, the value and what is allowed. */
export class BadBatch extends Error {
  override readonly name = 'BadBatch';
}

export const MAX_RESPONSES = 20_000;
const MAX_SLOTS = 200_000;
const MAX_URL = 65_536;
const MAX_KEY = 2048;
const MAX_TEXT = 16_384;

const show = (v: unknown): string => {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    s = undefined;
  }
  s ??= String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

function bad(field: string, v: unknown, allowed: string): never {
  throw new BadBatch(`${field}: ${show(v)} is not allowed (${allowed})`);
}

type Obj = Record<string, unknown>;

function obj(v: unknown, field: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(field, v, 'an object');
  return v as Obj;
}

function list(v: unknown, field: string, max: number): readonly unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) bad(field, v, 'a list');
  if (v.length > max) bad(field, `${v.length} items`, `at most ${max}`);
  return v;
}

const num = (v: unknown, field: string, min = -Infinity): number =>
  typeof v === 'number' && Number.isFinite(v) && v >= min ? v : bad(field, v, min === -Infinity ? 'a number' : `a number >= ${min}`);
const int = (v: unknown, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? (v as number) : bad(field, v, `a whole number from ${min} to ${max}`);
const nullableNum = (v: unknown, field: string, min = 0): number | null => (v === null ? null : typeof v === 'number' && Number.isFinite(v) && v >= min ? v : bad(field, v, `a number >= ${min}, or null`));
const text = (v: unknown, field: string, max: number, empty = true): string =>
  typeof v === 'string' && v.length <= max && (empty || v !== '') ? v : bad(field, v, `${empty ? 'a' : 'a non-empty'} text of at most ${max} characters`);
const nullableText = (v: unknown, field: string, max: number): string | null => (v === null || v === undefined ? null : text(v, field, max));
const bool = (v: unknown, field: string): boolean => (typeof v === 'boolean' ? v : bad(field, v, 'true or false'));
/** Epoch ms after 2001 and before 2286. */
const time = (v: unknown, field: string): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 1e12 && v < 1e13 ? v : bad(field, v, 'a time in epoch milliseconds');

function response(v: unknown, i: number): WireResponse {
  const f = `responses[${i}]`;
  if (!Array.isArray(v) || v.length !== RESPONSE_FIELDS.length) bad(f, v, `a list of the ${RESPONSE_FIELDS.length} fields ${RESPONSE_FIELDS.join(', ')}`);
  const a = v as unknown[];
  const at = (k: number) => `${f}[${k}] (${RESPONSE_FIELDS[k]})`;
  const status = a[6] === null ? null : int(a[6], at(6), 100, 999);
  const errorKind = a[17] === null ? null : (FAILURE_KINDS as readonly unknown[]).includes(a[17]) ? (a[17] as FailureKind) : bad(at(17), a[17], `null or one of ${FAILURE_KINDS.join(', ')}`);
  if ((status === null) === (errorKind === null)) bad(at(6), a[6], 'a status for a response, or null with an errorKind for a failed download');
  return {
    t: time(a[0], at(0)),
    startedAt: time(a[1], at(1)),
    waitMs: num(a[2], at(2), 0),
    slot: text(a[3], at(3), MAX_KEY),
    url: text(a[4], at(4), MAX_URL),
    method: text(a[5], at(5), 32),
    status,
    latency: nullableNum(a[7], at(7)),
    downloadTime: nullableNum(a[8], at(8)),
    bytes: int(a[9], at(9)),
    inFlight: int(a[10], at(10), 0, 1_000_000),
    delayBefore: num(a[11], at(11), 0),
    delayAfter: num(a[12], at(12), 0),
    delayCause: (DELAY_CAUSES as readonly unknown[]).includes(a[13]) ? (a[13] as DelayCause) : bad(at(13), a[13], DELAY_CAUSES.join(', ')),
    depth: int(a[14], at(14), 0, 1_000_000),
    contentType: nullableText(a[15], at(15), 1024),
    attempt: int(a[16], at(16), 0, 1_000_000),
    errorKind,
    errorMessage: nullableText(a[18], at(18), MAX_TEXT),
    debug: bool(a[19], at(19)),
  };
}

function slotRow(v: unknown, i: number): WireSlot {
  const f = `slots[${i}]`;
  if (!Array.isArray(v) || v.length !== SLOT_FIELDS.length) bad(f, v, `a list of the ${SLOT_FIELDS.length} fields ${SLOT_FIELDS.join(', ')}`);
  const a = v as unknown[];
  const at = (k: number) => `${f}[${k}] (${SLOT_FIELDS[k]})`;
  return {
    key: text(a[0], at(0), MAX_KEY),
    transferring: int(a[1], at(1)),
    queued: int(a[2], at(2)),
    active: int(a[3], at(3)),
    delay: num(a[4], at(4), 0),
    concurrency: int(a[5], at(5)),
    randomize: bool(a[6], at(6)),
    paused: bool(a[7], at(7)),
    pinDelay: nullableNum(a[8], at(8)),
    pinConcurrency: a[9] === null ? null : int(a[9], at(9), 1),
    nextStartAt: a[10] === null ? null : time(a[10], at(10)),
  };
}

function openInfo(v: unknown): WireOpen {
  const o = obj(v, 'open');
  const settings = obj(o.settings, 'open.settings');
  const overridden = o.overridden === undefined ? {} : obj(o.overridden, 'open.overridden');
  return {
    spider: text(o.spider, 'open.spider', 255, false),
    scrapyVersion: text(o.scrapyVersion, 'open.scrapyVersion', 64),
    bridgeVersion: text(o.bridgeVersion, 'open.bridgeVersion', 64),
    python: o.python === undefined ? '' : text(o.python, 'open.python', 64),
    pid: o.pid === undefined ? 0 : int(o.pid, 'open.pid'),
    startedAt: time(o.startedAt, 'open.startedAt'),
    startUrls: list(o.startUrls, 'open.startUrls', 100).map((u, i) => text(u, `open.startUrls[${i}]`, MAX_URL)),
    settings,
    overridden,
    autothrottle: o.autothrottle === undefined ? false : bool(o.autothrottle, 'open.autothrottle'),
  };
}

function event(v: unknown, i: number): WireEvent {
  const f = `events[${i}]`;
  const o = obj(v, f);
  const kind = o.kind === 'info' || o.kind === 'warning' || o.kind === 'error' ? o.kind : bad(`${f}.kind`, o.kind, 'info, warning or error');
  return {
    t: time(o.t, `${f}.t`), kind, code: text(o.code, `${f}.code`, 64, false), text: text(o.text, `${f}.text`, MAX_TEXT),
    slot: nullableText(o.slot, `${f}.slot`, MAX_KEY),
  };
}

function ack(v: unknown, i: number): WireAck {
  const f = `acks[${i}]`;
  const o = obj(v, f);
  const changes = list(o.changes, `${f}.changes`, 10_000).map((c, k) => {
    const g = `${f}.changes[${k}]`;
    if (!Array.isArray(c) || c.length !== 4) bad(g, c, 'a list [slot or null, setting, old value, new value]');
    return [nullableText(c[0], `${g}[0]`, MAX_KEY), text(c[1], `${g}[1]`, 64, false), c[2] ?? null, c[3] ?? null] as const;
  });
  return {
    id: text(o.id, `${f}.id`, 64, false), ok: bool(o.ok, `${f}.ok`), at: time(o.at, `${f}.at`),
    message: nullableText(o.message, `${f}.message`, MAX_TEXT), changes,
  };
}

/** Checks a batch whole; throws BadBatch naming the first field at fault. */
export function parseBatch(body: unknown): Batch {
  const b = obj(body, 'batch');
  if (b.v !== PROTOCOL_VERSION) bad('v', b.v, `${PROTOCOL_VERSION} (this Slotscope speaks protocol ${PROTOCOL_VERSION}; update slotscope-scrapy or Slotscope)`);
  const session = typeof b.session === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(b.session) ? b.session : bad('session', b.session, '8 to 64 letters, digits, _ or -');
  const seq = int(b.seq, 'seq', 1);
  const state = b.state === undefined || b.state === null ? null : (() => {
    const s = obj(b.state, 'state');
    return {
      paused: bool(s.paused, 'state.paused'), held: bool(s.held, 'state.held'), inFlight: int(s.inFlight, 'state.inFlight'),
      scheduled: s.scheduled === null || s.scheduled === undefined ? null : int(s.scheduled, 'state.scheduled'),
    };
  })();
  const close = b.close === undefined || b.close === null ? null : (() => {
    const c = obj(b.close, 'close');
    return {
      t: time(c.t, 'close.t'), reason: text(c.reason, 'close.reason', 255), stats: c.stats === undefined ? {} : obj(c.stats, 'close.stats'),
      unsent: c.unsent === undefined ? 0 : int(c.unsent, 'close.unsent'),
    };
  })();
  const responses = list(b.responses, 'responses', MAX_RESPONSES).map(response);
  const slots = list(b.slots, 'slots', MAX_SLOTS).map(slotRow);
  return {
    session, seq,
    open: b.open === undefined || b.open === null ? null : openInfo(b.open),
    responses,
    events: list(b.events, 'events', 10_000).map(event),
    acks: list(b.acks, 'acks', 10_000).map(ack),
    slots,
    gone: list(b.gone, 'gone', MAX_SLOTS).map((g, i) => text(g, `gone[${i}]`, MAX_KEY)),
    state,
    dropped: b.dropped === undefined ? 0 : int(b.dropped, 'dropped'),
    close,
  };
}

/** A command for the bridge, as it travels in an ingest answer. */
export type WireCommand =
  | { readonly id: string; readonly op: 'pause' | 'resume' }
  | { readonly id: string; readonly op: 'stop'; readonly reason: string }
  | { readonly id: string; readonly op: 'settings'; readonly changes: Readonly<Record<string, unknown>> }
  | { readonly id: string; readonly op: 'slot-pause'; readonly slot: string; readonly paused: boolean }
  | { readonly id: string; readonly op: 'pin-delay'; readonly slot: string; readonly seconds: number | null }
  | { readonly id: string; readonly op: 'pin-concurrency'; readonly slot: string; readonly value: number | null }
  | { readonly id: string; readonly op: 'clear-pins'; readonly slot: string };

/** Distributes Omit over a union (each command keeps its own fields). */
export type CommandBody = WireCommand extends infer C ? (C extends WireCommand ? Omit<C, 'id'> : never) : never;

/** What the ingest route answers with status 200. */
export interface IngestAnswer {
  readonly ok: true;
  readonly crawlId: number;
  readonly commands: readonly WireCommand[];
  /** The batch's seq was applied before (a retry whose answer was lost): nothing applied again. */
  readonly duplicate?: true;
}
