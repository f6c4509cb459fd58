// The top bar: the app's name and whether the renderer is connected to its host (the badge
// is the only part that re-renders when the connection drops or comes back).

import { Badge } from '../components/badge';
import type { ConnectionStore } from '../store/connection-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { CONNECTION_TONE } from './tones';

const WORDS = { connecting: 'Connecting…', open: 'Connected', reconnecting: 'Reconnecting…', closed: 'Disconnected', refused: 'Refused: open the new address' } as const;
const state = (s: ConnectionStore) => s.current();

export function AppHeader() {
  const { stores } = useApp();
  const connection = useStore(stores.connection, state);
  const via = stores.connection.kind === 'ipc' ? 'via Electron IPC' : 'via WebSocket';
  return (
    <header className="app-header">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Slotscope</span>
        <span className="brand-tagline">polite crawl console</span>
      </div>
      <div className="connection" data-testid="connection" data-state={connection}>
        <Badge tone={CONNECTION_TONE[connection]}>
          <span className="dot" aria-hidden="true" /> {WORDS[connection]}
        </Badge>
        <span className="connection-via">{via}</span>
      </div>
    </header>
  );
}
