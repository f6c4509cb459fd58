// What the preload exposes as `window.bridge`, built over two IPC calls and nothing else: invoke
// and subscribe on an allowlist taken from the contract's METHODS and EVENTS, never raw ipcRenderer.

import { EVENTS, METHODS, type EventName, type Method, type Reply } from '../../shared/contract';
import { EVENT_CHANNEL, INVOKE_CHANNEL } from './channels';

/** Methods the renderer may invoke: exactly the contract's. */
export const ALLOWED_METHODS: ReadonlySet<string> = new Set<Method>(METHODS);
/** Events the renderer may subscribe to: exactly the contract's. */
export const ALLOWED_EVENTS: ReadonlySet<string> = new Set<EventName>(EVENTS);

/** The two calls of ipcRenderer the bridge needs (Electron's own object in the preload). */
export interface IpcPort {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

export interface Bridge {
  /** Resolves with the host's Reply; a method outside the allowlist is refused here, without IPC. */
  invoke(method: string, params: unknown): Promise<Reply>;
  /** Listens to one event of the allowlist; returns the unsubscribe function. Throws for any other name. */
  subscribe(event: string, listener: (payload: unknown) => void): () => void;
}

export function createBridge(ipc: IpcPort): Bridge {
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  ipc.on(EVENT_CHANNEL, (_event, name, payload) => {
    if (typeof name !== 'string') return;
    for (const l of listeners.get(name) ?? []) {
      try {
        l(payload);
      } catch {
        /* a listener's failure is its own */
      }
    }
  });
  return {
    invoke(method, params) {
      if (typeof method !== 'string' || !ALLOWED_METHODS.has(method)) {
        return Promise.resolve({
          ok: false,
          error: { code: 'unknown-method', field: 'method', message: `unknown method ${JSON.stringify(String(method).slice(0, 100))}; known: ${METHODS.join(', ')}` },
        });
      }
      return ipc.invoke(INVOKE_CHANNEL, method, params) as Promise<Reply>;
    },
    subscribe(event, listener) {
      if (typeof event !== 'string' || !ALLOWED_EVENTS.has(event)) {
        throw new TypeError(`unknown event ${JSON.stringify(String(event).slice(0, 100))}; known: ${EVENTS.join(', ')}`);
      }
      if (typeof listener !== 'function') throw new TypeError(`subscribe(${JSON.stringify(event)}): the listener must be a function`);
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => void set.delete(listener);
    },
  };
}
