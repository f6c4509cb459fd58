// The visible message line: the latest refusal or failure of a command, in words, with the
// host's AppError code and field, until it is dismissed or replaced.

import type { AppError } from '../../../shared/contract';
import { FrameStore } from './frame-store';

export interface Message {
  /** Increases with each message, so a repeat of the same text still shows as new. */
  readonly id: number;
  /** What was being done, e.g. "Pausing slot a.test". */
  readonly action: string;
  readonly error: AppError;
  readonly at: number;
}

export class MessageStore extends FrameStore {
  private message: Message | null = null;
  private nextId = 1;

  current(): Message | null {
    return this.message;
  }

  report(action: string, error: AppError): void {
    this.message = { id: this.nextId++, action, error, at: Date.now() };
    this.changed();
  }

  dismiss(id?: number): void {
    if (!this.message || (id !== undefined && this.message.id !== id)) return;
    this.message = null;
    this.changed();
  }
}
