// The renderer's side of the browser host: typed invoke/subscribe over one WebSocket that comes
// back by itself after a restart or a network blip. Browser-safe: no Node or DOM imports, any
// WebSocket (the page's, or the `ws` package's in tests and benchmarks).

import type { AppError, AppEvents, EventName, Method, Params, Result, WireReply } from '../../../shared/contract';
import type { ConnectionState } from './transport';

export type { ConnectionState } from './transport';

/** Function types checked bivariantly, so both the DOM's and the `ws` package's handlers fit. */
type Handler<E> = { bivarianceHack(event: E): void }['bivarianceHack'];

/** The part of a WebSocket (DOM or `ws`) the client uses. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: Handler<unknown> | null;
  onclose: Handler<{ readonly code: number; readonly reason: string }> | null;
  onerror: Handler<unknown> | null;
  onmessage: Handler<{ readonly data: unknown }> | null;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface ConnectOptions {
  /** The WebSocket class; default `globalThis.WebSocket` (pass `WebSocket` from 'ws' in Node 20). */
  readonly WebSocketImpl?: WebSocketConstructor;
  /** How long an invoke waits for a connection before it fails; default 10 000 ms. */
  readonly queueTimeoutMs?: number;
  /** First reconnection delay; doubles up to `maxBackoffMs`. Default 250 ms. */
  readonly minBackoffMs?: number;
  /** Longest reconnection delay; default 5 000 ms. */
  readonly maxBackoffMs?: number;
  /** Where a listener's exception goes; default console.error. */
  readonly onListenerError?: (err: unknown) => void;
  /**
   * Events whose messages are parsed and delivered later, one per `schedule` call (the page: right
   * after the next frame is painted, so a 10,000-row 'slots.update' does not land inside a frame).
   * Order is kept: any other message first delivers every deferred one before it.
   */
  readonly deferEvents?: { readonly events: readonly EventName[]; readonly schedule: (run: () => void) => void };
  /**
   * Awaited before each reconnection attempt (not the first connection), e.g. to wait while the host
   * refuses this client's token instead of knocking on its door every few seconds.
   */
  readonly beforeReconnect?: () => Promise<unknown>;
}

export interface Client {
  /** Sends a request; resolves with its result, rejects with an {@link InvokeError}. */
  invoke<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  /** Listens to one event; listeners survive reconnections. Returns the unsubscribe function. */
  subscribe<E extends EventName>(event: E, listener: (payload: AppEvents[E]) => void): () => void;
  /** Called at once with the current state, then on every change. Returns the unsubscribe function. */
  onState(listener: (state: ConnectionState) => void): () => void;
  /** The connection's state now. */
  readonly state: ConnectionState;
  /** Closes for good: pending and queued invokes fail, no more reconnections. */
  close(): void;
}

/** An invoke that failed: the host's AppError, or one made up here when the connection failed it. */
export class InvokeError extends Error {
  readonly code: AppError['code'];
  readonly field: string | undefined;
  constructor(
    readonly appError: AppError,
    /** True when the transport failed the call (not connected, connection lost), not the host. */
    readonly transport = false,
  ) {
    super(appError.message);
    this.name = 'InvokeError';
    this.code = appError.code;
    this.field = appError.field;
  }
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

interface Queued extends Pending {
  readonly frame: string;
  readonly id: number;
  readonly timer: ReturnType<typeof setTimeout>;
}

const OPEN = 1;

/**
 * Connects to a server's `/ws` URL (token in the query, or a cookie the page already has).
 * Invokes made while disconnected wait in a queue for `queueTimeoutMs`; invokes whose request
 * was sent when the connection dropped fail at once (they may or may not have run, and are
 * not resent, since creating or deleting twice is worse than asking the user to retry).
 */
export function connect(url: string, opts: ConnectOptions = {}): Client {
  const Impl = opts.WebSocketImpl ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Impl) throw new Error('no WebSocket implementation: pass WebSocketImpl');
  new URL(url); // a malformed address throws here, not on every reconnection
  const queueTimeoutMs = opts.queueTimeoutMs ?? 10_000;
  const minBackoff = opts.minBackoffMs ?? 250;
  const maxBackoff = opts.maxBackoffMs ?? 5_000;
  const onListenerError = opts.onListenerError ?? ((err: unknown) => console.error('slotscope client: a listener threw', err));

  const listeners = new Map<string, Set<(payload: never) => void>>();
  const stateListeners = new Set<(state: ConnectionState) => void>();
  const pending = new Map<number, Pending>();
  const queue: Queued[] = [];
  let state: ConnectionState = 'connecting';
  let socket: WebSocketLike | null = null;
  let nextId = 1;
  let backoff = minBackoff;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;

  const setState = (s: ConnectionState) => {
    if (s === state) return;
    state = s;
    for (const l of [...stateListeners]) {
      try {
        l(s);
      } catch (e) {
        onListenerError(e);
      }
    }
  };

  const transportError = (message: string) => new InvokeError({ code: 'internal', message }, true);

  const flush = () => {
    while (queue.length > 0 && socket?.readyState === OPEN) {
      const q = queue.shift()!;
      clearTimeout(q.timer);
      pending.set(q.id, q);
      socket.send(q.frame);
    }
  };

  // Deferred event messages, as received (raw text): parsed and delivered one per scheduled run.
  const deferPrefixes = (opts.deferEvents?.events ?? []).map((e) => `{"event":${JSON.stringify(e)},`);
  const deferred: string[] = [];
  let scheduled = false;
  const runDeferred = () => {
    scheduled = false;
    const next = deferred.shift();
    if (next !== undefined) deliver(next);
    if (deferred.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled || !opts.deferEvents) return;
    scheduled = true;
    opts.deferEvents.schedule(runDeferred);
  };
  const drainDeferred = () => {
    while (deferred.length > 0) deliver(deferred.shift()!);
  };

  const onMessage = (data: unknown) => {
    if (typeof data !== 'string') return;
    if (deferPrefixes.length > 0 && deferPrefixes.some((p) => data.startsWith(p))) {
      deferred.push(data);
      schedule();
      return;
    }
    drainDeferred();
    deliver(data);
  };

  const deliver = (data: string) => {
    let msg: Partial<WireReply> & { event?: string; payload?: unknown };
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof msg.event === 'string') {
      for (const l of [...(listeners.get(msg.event) ?? [])]) {
        try {
          (l as (payload: unknown) => void)(msg.payload);
        } catch (e) {
          onListenerError(e);
        }
      }
      return;
    }
    if (typeof msg.id !== 'number') return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok === true) p.resolve(msg.result);
    else if (msg.ok === false && msg.error) p.reject(new InvokeError(msg.error));
    else p.reject(transportError('malformed reply'));
  };

  const open = () => {
    retryTimer = null;
    let ws: WebSocketLike;
    try {
      ws = new Impl(url);
    } catch {
      scheduleRetry();
      return;
    }
    socket = ws;
    ws.onopen = () => {
      if (socket !== ws) return;
      backoff = minBackoff;
      setState('open');
      flush();
    };
    ws.onmessage = (ev) => {
      if (socket === ws) onMessage(ev.data);
    };
    ws.onerror = () => {
      /* a close always follows */
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(transportError('the connection was lost before the reply; the request may or may not have run'));
      }
      if (state !== 'closed') scheduleRetry();
    };
  };

  const scheduleRetry = () => {
    if (state === 'closed') return;
    setState('reconnecting');
    const delay = Math.min(backoff, maxBackoff) * (1 + Math.random() * 0.2);
    backoff = Math.min(backoff * 2, maxBackoff);
    retryTimer = setTimeout(() => {
      if (!opts.beforeReconnect) return open();
      retryTimer = null;
      opts.beforeReconnect().catch(() => undefined).then(() => {
        if (state !== 'closed' && socket === null && retryTimer === null) open();
      });
    }, delay);
  };

  open();

  return {
    invoke<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
      if (state === 'closed') return Promise.reject(transportError('the client is closed'));
      return new Promise<Result<M>>((resolve, reject) => {
        const id = nextId++;
        let frame: string;
        try {
          frame = JSON.stringify({ id, method, params });
        } catch (e) {
          reject(new InvokeError({ code: 'invalid', message: `params cannot be sent as JSON: ${e instanceof Error ? e.message : String(e)}`, field: 'params' }, true));
          return;
        }
        const entry: Pending = { resolve: resolve as (v: unknown) => void, reject };
        if (socket?.readyState === OPEN && queue.length === 0) {
          pending.set(id, entry);
          socket.send(frame);
          return;
        }
        const timer = setTimeout(() => {
          const i = queue.findIndex((q) => q.id === id);
          if (i >= 0) queue.splice(i, 1);
          reject(transportError(`not connected to the server after ${queueTimeoutMs} ms`));
        }, queueTimeoutMs);
        queue.push({ ...entry, frame, id, timer });
      });
    },
    subscribe<E extends EventName>(event: E, listener: (payload: AppEvents[E]) => void): () => void {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (payload: never) => void);
      return () => void set.delete(listener as (payload: never) => void);
    },
    onState(listener: (state: ConnectionState) => void): () => void {
      stateListeners.add(listener);
      listener(state);
      return () => void stateListeners.delete(listener);
    },
    get state() {
      return state;
    },
    close(): void {
      if (state === 'closed') return;
      setState('closed');
      if (retryTimer) clearTimeout(retryTimer);
      const ws = socket;
      socket = null;
      ws?.close(1000, 'client closed');
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(transportError('the client was closed'));
      }
      for (const q of queue.splice(0)) {
        clearTimeout(q.timer);
        q.reject(transportError('the client was closed'));
      }
    },
  };
}
