// The transport's connection state for the header, kept apart from the data stores so a
// reconnection re-renders the header badge only (and the controls that are off while it is down).

import type { ConnectionState, Transport } from '../transport/transport';
import { FrameStore } from './frame-store';

export class ConnectionStore extends FrameStore {
  private state: ConnectionState = 'connecting';
  private lost: number | null = null;

  constructor(readonly kind: Transport['kind']) {
    super();
  }

  current(): ConnectionState {
    return this.state;
  }

  /** True while the host can be asked: commands are only offered then. */
  online(): boolean {
    return this.state === 'open';
  }

  /** When the connection was lost (epoch ms), while it is; null while connected or before the first connection. */
  lostAt(): number | null {
    return this.lost;
  }

  set(state: ConnectionState): void {
    if (state === this.state) return;
    if (state === 'open') this.lost = null;
    else if (this.state === 'open') this.lost = Date.now();
    this.state = state;
    this.changed();
  }
}
