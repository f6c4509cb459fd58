// Forwards the core's events (already coalesced to at most 10 slot updates a second) to the app
// window, and the menu's commands with them, over the one event channel the preload listens to.

import type { AppCommand, AppEvents, Dispatcher, EventName } from '../../shared/contract';
import { EVENT_CHANNEL } from '../preload/channels';

/** Where events go: the window's webContents (or anything that sends like it). */
export interface EventTarget {
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
}

export interface EventPump {
  /** Sends a menu command to the renderer as the 'app.command' event. */
  command(command: AppCommand): void;
  /** Stops forwarding. */
  stop(): void;
}

/** Subscribes to `core` and forwards every event to `target()` while it is there; drops them while it is not. */
export function startEventPump(core: Dispatcher, target: () => EventTarget | null): EventPump {
  const forward = <E extends EventName>(event: E, payload: AppEvents[E]): void => {
    const t = target();
    if (t === null || t.isDestroyed()) return;
    t.send(EVENT_CHANNEL, event, payload);
  };
  const unsubscribe = core.subscribe(forward);
  return {
    command: (command) => forward('app.command', { command }),
    stop: unsubscribe,
  };
}
