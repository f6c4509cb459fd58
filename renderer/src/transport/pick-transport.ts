// Chooses the transport once at start-up: Electron's preload bridge when there is one, else the
// browser host's WebSocket. Also takes the token out of the address bar once it has been read.

import { bridgeTransport } from './bridge-transport';
import type { Transport } from './transport';
import { webSocketTransport, webSocketUrl } from './websocket-transport';

export function pickTransport(win: Window = window): Transport {
  if (win.bridge) return bridgeTransport(win.bridge);
  const transport = webSocketTransport(webSocketUrl(win.location), { probeUrl: `${win.location.protocol}//${win.location.host}/` });
  hideToken(win);
  return transport;
}

/** The server set its cookie when it served this page; the token need not stay on screen or in history. */
function hideToken(win: Window): void {
  const url = new URL(win.location.href);
  if (!url.searchParams.has('token')) return;
  url.searchParams.delete('token');
  win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
}
