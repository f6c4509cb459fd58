// The transport inside Electron: the preload's `window.bridge` (an allowlist over IPC). Replies
// cross IPC as data (`{ ok, result | error }`), so refusals are rebuilt here into HostErrors.

import type { Reply } from '../../../shared/contract';
import { HostError, isAppError, type Transport } from './transport';

/** What the preload exposes as `window.bridge`. */
export interface PreloadBridge {
  /** Resolves with the host's Reply (a bare result is accepted too). */
  invoke(method: string, params: unknown): Promise<unknown>;
  /** Returns the unsubscribe function. */
  subscribe(event: string, listener: (payload: unknown) => void): (() => void) | void;
}

declare global {
  interface Window {
    bridge?: PreloadBridge;
  }
}

function isReply(x: unknown): x is Reply {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as { ok?: unknown; error?: unknown };
  return r.ok === true ? 'result' in r : r.ok === false && isAppError(r.error);
}

export function bridgeTransport(bridge: PreloadBridge): Transport {
  return {
    kind: 'ipc',
    async invoke(method, params) {
      const r = await bridge.invoke(method, params);
      if (!isReply(r)) return r as never;
      if (r.ok) return r.result as never;
      throw new HostError(r.error);
    },
    subscribe(event, listener) {
      const off = bridge.subscribe(event, listener as (payload: unknown) => void);
      return typeof off === 'function' ? off : () => {};
    },
    onState(listener) {
      // IPC to the host process is there for as long as the window is.
      listener('open');
      return () => {};
    },
  };
}
