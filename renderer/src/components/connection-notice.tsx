// What the page says while its host is gone: since when, that figures are as they were then and
// controls are off, and, when the host came back with another token, exactly which address to open.

import { useContext } from 'react';
import { ConnectionStore } from '../store/connection-store';
import { useStore } from '../store/use-store';
import { AppContext } from '../views/app-context';
import { formatWhen } from '../views/format';

const online = (s: ConnectionStore) => s.online();
const stateOf = (s: ConnectionStore) => s.current();
const lostAtOf = (s: ConnectionStore) => s.lostAt();

/** The connection of a tree rendered without the app (a component test): always there. */
const ALWAYS_OPEN = new ConnectionStore('ipc');
ALWAYS_OPEN.set('open');

/** False while the host cannot be reached (or refuses the page): commands are off then. */
export function useHostOnline(): boolean {
  const app = useContext(AppContext);
  return useStore(app?.stores.connection ?? ALWAYS_OPEN, online);
}

/** The title a control gets while it is off because the host is gone. */
export const OFFLINE_TITLE = 'Not connected to the host: this is off until it is back';

export function ConnectionNotice() {
  const app = useContext(AppContext)!;
  const state = useStore(app.stores.connection, stateOf);
  const lostAt = useStore(app.stores.connection, lostAtOf);
  if (state === 'open' || (state === 'connecting' && lostAt === null)) return null;
  const host = window.location.host;
  if (state === 'refused') {
    const address = `${window.location.protocol}//${host}/?token=`;
    return (
      <div className="connection-notice bad" role="alert" data-testid="connection-lost" data-state={state}>
        <strong>The host at {host} refuses this page:</strong> it was started again with another token (another data folder, or its
        browser-host.json was removed). Open the address it printed when it started, <code>{address}…</code> (<code>slotscope serve</code> prints
        it on its first line and <code>npm start</code> opens it); this page then reconnects too. Until then the figures below are as they
        were{lostAt !== null ? ` at ${formatWhen(lostAt)}` : ''} and the controls are off.
      </div>
    );
  }
  return (
    <div className="connection-notice" role="alert" data-testid="connection-lost" data-state={state}>
      <strong>Not connected to the host at {host}{lostAt !== null ? ` since ${formatWhen(lostAt)}` : ''}:</strong> the figures below are as
      they were then and the controls are off until it is back.{' '}
      {state === 'closed' ? 'Reload the page to connect again.' : 'Trying again every few seconds: a host started again on the same data folder takes this page back by itself.'}
    </div>
  );
}
