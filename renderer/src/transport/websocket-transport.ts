// The transport in a plain browser: the browser host's reconnecting WebSocket client at /ws of the
// page's own origin. The token travels as the cookie set by the first page load (and in the URL).

import { connect } from './ws-client';
import { afterFrame } from '../store/frame-store';
import type { Transport } from './transport';

/** `ws(s)://<host>/ws`, with the page's `?token=` passed on when it has one. */
export function webSocketUrl(location: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const token = new URLSearchParams(location.search).get('token');
  return `${scheme}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

export function webSocketTransport(url: string): Transport {
  // A 10,000-row slot update is parsed and applied after a frame, not inside one (see afterFrame).
  const client = connect(url, { deferEvents: { events: ['slots.update'], schedule: afterFrame } });
  return {
    kind: 'websocket',
    invoke: (method, params) => client.invoke(method, params),
    subscribe: (event, listener) => client.subscribe(event, listener),
    onState: (listener) => client.onState(listener),
  };
}
