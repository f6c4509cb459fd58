// The transport in a plain browser: the browser host's reconnecting WebSocket client at /ws of the
// page's own origin. The token travels as the cookie set by the first page load (and in the URL).

import { connect } from './ws-client';
import { afterFrame } from '../store/frame-store';
import type { ConnectionState, Transport } from './transport';

/** `ws(s)://<host>/ws`, with the page's `?token=` passed on when it has one. */
export function webSocketUrl(location: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = new URLSearchParams(location.search).get('token');
  return `${scheme}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

/** How often a page whose token the host refuses asks again (a plain HTTP request the host does not log). */
const REFUSED_RETRY_MS = 5000;

export interface WebSocketTransportOptions {
  /**
   * A page of the host to ask, with the page's cookie, before each reconnection: a 401 there means
   * the host is back but refuses this page's token (state `refused`); no WebSocket is tried until it
   * answers otherwise (e.g. once the host's address was opened again in this browser, renewing the cookie).
   */
  readonly probeUrl?: string;
}

export function webSocketTransport(url: string, o: WebSocketTransportOptions = {}): Transport {
  const listeners = new Set<(state: ConnectionState) => void>();
  let clientState: ConnectionState = 'connecting';
  let refused = false;
  let shown: ConnectionState = 'connecting';
  const update = () => {
    const next = refused && clientState !== 'open' ? 'refused' : clientState;
    if (next === shown) return;
    shown = next;
    for (const l of [...listeners]) l(next);
  };
  const probe = async (): Promise<'refused' | 'other'> => {
    try {
      const r = await fetch(o.probeUrl!, { method: 'HEAD', cache: 'no-store', credentials: 'same-origin' });
      return r.status === 401 ? 'refused' : 'other';
    } catch {
      return 'other';
    }
  };
  const beforeReconnect = o.probeUrl === undefined ? undefined : async () => {
    for (;;) {
      const answer = await probe();
      refused = answer === 'refused';
      update();
      if (!refused) return;
      await new Promise((r) => setTimeout(r, REFUSED_RETRY_MS));
    }
  };
  // A 10,000-row slot update is parsed and applied after a frame, not inside one (see afterFrame).
  const client = connect(url, { deferEvents: { events: ['slots.update'], schedule: afterFrame }, beforeReconnect });
  client.onState((s) => {
    clientState = s;
    if (s === 'open') refused = false;
    update();
  });
  return {
    kind: 'websocket',
    invoke: (method, params) => client.invoke(method, params),
    subscribe: (event, listener) => client.subscribe(event, listener),
    onState(listener) {
      listeners.add(listener);
      listener(shown);
      return () => void listeners.delete(listener);
    },
  };
}
