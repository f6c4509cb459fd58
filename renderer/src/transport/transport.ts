// The one interface through which the renderer reaches its host, whichever host it runs in
// (Electron's preload bridge or the browser host's WebSocket): stores and views never know which.

import { ERROR_CODES, type AppError, type AppEvents, type EventName, type Method, type Params, type Result } from '../../../shared/contract';

/**
 * A transport's connection: the WebSocket client's states (IPC is always `open`), and `refused`: the
 * host answers but refuses this page's token (it was restarted with another one).
 */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed' | 'refused';

export interface Transport {
  /** `ipc` inside Electron, `websocket` in a browser. */
  readonly kind: 'ipc' | 'websocket';
  /** Resolves with the result; rejects with an error {@link toAppError} turns into the host's AppError. */
  invoke<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  /** Listens to one event; returns the unsubscribe function. */
  subscribe<E extends EventName>(event: E, listener: (payload: AppEvents[E]) => void): () => void;
  /** Called at once with the current state, then on every change; returns the unsubscribe function. */
  onState(listener: (state: ConnectionState) => void): () => void;
}

/** A host's refusal carried as an exception inside the renderer (it crossed the boundary as data). */
export class HostError extends Error {
  constructor(readonly appError: AppError) {
    super(appError.message);
    this.name = 'HostError';
  }
}

/** The contract's error codes: a refusal with any other code is not taken for one. */
const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

export function isAppError(x: unknown): x is AppError {
  if (typeof x !== 'object' || x === null) return false;
  const e = x as { code?: unknown; message?: unknown };
  return typeof e.code === 'string' && CODES.has(e.code) && typeof e.message === 'string';
}

/** The AppError behind anything an invoke rejected with (the WebSocket client's InvokeError, a HostError, any Error). */
export function toAppError(e: unknown): AppError {
  if (typeof e === 'object' && e !== null) {
    const inner = (e as { appError?: unknown }).appError;
    if (isAppError(inner)) return inner;
    if (isAppError(e)) {
      const field = (e as { field?: unknown }).field;
      return typeof field === 'string' ? { code: e.code, message: e.message, field } : { code: e.code, message: e.message };
    }
  }
  return { code: 'internal', message: e instanceof Error ? e.message : String(e) };
}
