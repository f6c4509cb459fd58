// One connected WebSocket client: its requests answered through the dispatcher, every event pushed
// to it, and a slow reader shed of slot updates (never of replies) until it catches up.

import type { RawData, WebSocket } from 'ws';
import type { AppEvents, Dispatcher, EventName } from '../../shared/contract';
import { answerFrame, encodeReply, type WireReply } from './protocol';

export interface SessionOptions {
  readonly dispatcher: Dispatcher;
  /** Above this many unsent bytes, 'slots.update' events are dropped for this client. */
  readonly backpressureBytes: number;
  /** The JSON of an event frame (shared by all sessions so one event is serialised once). */
  readonly eventText: (event: EventName, payload: unknown) => string | null;
  readonly log: (line: string) => void;
  /** A short name for log lines. */
  readonly name: string;
}

const OPEN = 1;

/**
 * Serves one client until its socket closes. Dropped slot updates are deltas, so a crawl that
 * lost some is marked stale; at its next update that finds the client caught up, the session
 * sends a full 'slots.snapshot' as one 'slots.update' instead (updates arriving meanwhile are
 * held and follow it), so the client's table heals without knowing anything was dropped.
 */
export function startSession(ws: WebSocket, o: SessionOptions): void {
  const stale = new Set<number>();
  const resyncing = new Map<number, string[]>();
  let dropped = 0;
  let closed = false;

  const send = (text: string) => {
    if (ws.readyState === OPEN) ws.send(text);
  };
  const reply = (r: WireReply) => send(encodeReply(r));

  const resync = (crawlId: number, trigger: string) => {
    const held: string[] = [];
    resyncing.set(crawlId, held);
    const finish = (full: string | null) => {
      resyncing.delete(crawlId);
      send(full ?? trigger);
      for (const t of held) send(t);
    };
    Promise.resolve()
      .then(() => o.dispatcher.dispatch('slots.snapshot', { id: crawlId }))
      .then(
        (r) => {
          if (!r.ok) return finish(null);
          const { rows, now } = r.result as { rows: AppEvents['slots.update']['rows']; now: number };
          finish(o.eventText('slots.update', { crawlId, rows, now } satisfies AppEvents['slots.update']));
        },
        () => finish(null),
      );
  };

  const onEvent = (event: EventName, payload: unknown) => {
    if (closed) return;
    const text = o.eventText(event, payload);
    if (text === null) return;
    if (event === 'slots.update') {
      const crawlId = (payload as AppEvents['slots.update']).crawlId;
      if (ws.bufferedAmount > o.backpressureBytes) {
        if (dropped++ === 0) o.log(`${o.name}: slow reader (${ws.bufferedAmount} bytes unsent), dropping slot updates until it catches up`);
        stale.add(crawlId);
        return;
      }
      if (dropped > 0) {
        o.log(`${o.name}: caught up after ${dropped} dropped slot updates`);
        dropped = 0;
      }
      const held = resyncing.get(crawlId);
      if (held) {
        held.push(text);
        return;
      }
      if (stale.delete(crawlId)) {
        resync(crawlId, text);
        return;
      }
    }
    send(text);
  };

  let unsubscribe: () => void = () => {};
  try {
    unsubscribe = o.dispatcher.subscribe((event, payload) => {
      try {
        onEvent(event, payload);
      } catch (e) {
        o.log(`${o.name}: could not send ${event}: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
  } catch (e) {
    o.log(`${o.name}: could not subscribe to events: ${e instanceof Error ? e.message : String(e)}`);
  }

  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (isBinary) {
      reply({ id: null, ok: false, error: { code: 'invalid', message: 'binary frames are not accepted: send JSON text' } });
      return;
    }
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
    void answerFrame(text, o.dispatcher, (method, err) =>
      o.log(`${o.name}: ${method} threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    ).then(reply);
  });
  ws.on('error', (err: Error & { code?: string }) => {
    o.log(`${o.name}: ${err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'message over the size limit, closing with 1009' : `error: ${err.message}`}`);
  });
  ws.on('close', () => {
    closed = true;
    unsubscribe();
  });
}
