// The transport's connection state for the header, kept apart from the data stores so a
// reconnection re-renders the header badge only.

import type { ConnectionState, Transport } from '../transport/transport';
import { FrameStore } from './frame-store';

export class ConnectionStore extends FrameStore {
  private state: ConnectionState = 'connecting';

  constructor(readonly kind: Transport['kind']) {
    super();
  }

  current(): ConnectionState {
    return this.state;
  }

  set(state: ConnectionState): void {
    if (state === this.state) return;
    this.state = state;
    this.changed();
  }
}
