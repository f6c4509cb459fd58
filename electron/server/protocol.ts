// The one function that turns a client's WebSocket frame into a reply: anything malformed is
// answered as data and never reaches or breaks the dispatcher. The wire format is the contract's.

import { METHODS, type AppError, type Dispatcher, type Reply, type RequestId, type WireReply } from '../../shared/contract';

export type { RequestId, WireEvent, WireReply, WireRequest } from '../../shared/contract';

const METHOD_SET: ReadonlySet<string> = new Set(METHODS);
const MAX_ID_LENGTH = 200;

const failure = (id: RequestId | null, code: AppError['code'], message: string, field?: string): WireReply => ({
  id,
  ok: false,
  error: field === undefined ? { code, message } : { code, message, field },
});

function isReply(r: unknown): r is Reply {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as { ok?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (x.ok === true) return true;
  return x.ok === false && typeof x.error === 'object' && x.error !== null && typeof x.error.code === 'string' && typeof x.error.message === 'string';
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Answers one text frame. Bad JSON, a non-object or a bad `id` get `invalid` with `id: null`;
 * a missing or non-string `method` gets `invalid`; a method outside METHODS gets
 * `unknown-method` without reaching the dispatcher; a dispatcher that throws or returns no
 * Reply gets `internal` (reported through `onInternal`). Missing `params` are sent as `{}`.
 */
export async function answerFrame(text: string, dispatcher: Dispatcher, onInternal: (method: string, err: unknown) => void = () => {}): Promise<WireReply> {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch (e) {
    return failure(null, 'invalid', `the frame is not JSON (${messageOf(e)})`);
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
    return failure(null, 'invalid', 'a request is a JSON object {"id", "method", "params"}');
  }
  const { id, method, params } = msg as { id?: unknown; method?: unknown; params?: unknown };
  const idOk = (typeof id === 'number' && Number.isFinite(id)) || (typeof id === 'string' && id.length <= MAX_ID_LENGTH);
  if (!idOk) return failure(null, 'invalid', `id must be a finite number or a string of at most ${MAX_ID_LENGTH} characters`, 'id');
  const rid = id as RequestId;
  if (typeof method !== 'string') return failure(rid, 'invalid', 'method must be a string', 'method');
  if (!METHOD_SET.has(method)) return failure(rid, 'unknown-method', `unknown method ${JSON.stringify(method.slice(0, 100))}`, 'method');
  let reply: unknown;
  try {
    reply = await dispatcher.dispatch(method, params === undefined ? {} : params);
  } catch (e) {
    onInternal(method, e);
    return failure(rid, 'internal', `${method} failed: ${messageOf(e)}`);
  }
  if (!isReply(reply)) {
    onInternal(method, new Error('the dispatcher returned something that is not a Reply'));
    return failure(rid, 'internal', `${method} failed: no reply`);
  }
  return { id: rid, ...reply };
}

/** Serialises a reply; a result JSON cannot carry (a cycle, a BigInt) becomes an `internal` error. */
export function encodeReply(reply: WireReply): string {
  try {
    return JSON.stringify(reply);
  } catch (e) {
    return JSON.stringify(failure(reply.id, 'internal', `the result cannot be sent as JSON (${messageOf(e)})`));
  }
}
