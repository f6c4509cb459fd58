// One connected WebSocket client: its requests answered through the dispatcher, every event pushed
// to it, a slow reader shed of slot updates (never of replies) until it catches up, and a client
// that will not read at all no longer read from, then closed: its unsent bytes stay bounded.

import type { RawData, WebSocket } from 'ws';
import type { AppEvents, Dispatcher, EventName } from '../../shared/contract';
import { answerFrame, encodeReply, type WireReply } from './protocol';

export interface SessionOptions {
  readonly dispatcher: Dispatcher;
  /**
   * Above this many unsent bytes, 'slots.update' events are dropped for this client and its
   * requests are no longer read (so its replies stop piling up) until it is back under.
   */
  readonly backpressureBytes: number;
  /** A client over backpressureBytes that reads nothing for this long is closed. */
  readonly slowClientMs: number;
  /** Called once when the session closes a client that would not read (the server counts them). */
  readonly onShed?: () => void;
  /** The JSON of an event frame (shared by all sessions so one event is serialised once). */
  readonly eventText: (event: EventName, payload: unknown) => string | null;
  readonly log: (line: string) => void;
  /** A short name for log lines. */
  readonly name: string;
}

const OPEN = 1;

/** How often a client over the cap is looked at (reading resumed, or progress checked). */
const WATCH_MS = 50;

/** Requests of one client answered at once; more wait, unread, until one is answered. */
const MAX_IN_FLIGHT = 64;

type RawFrame = readonly [data: RawData, isBinary: boolean];

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

  // Flow control. Over backpressureBytes the client's requests are not read (TCP pushes back on
  // it); a watch then checks every WATCH_MS whether it read anything: unsent bytes that went down
  // beyond what was added since. Nothing read for slowClientMs: the client is closed.
  let watch: NodeJS.Timeout | null = null;
  let readingPaused = false;
  let lastBuffered = 0;
  let addedSince = 0;
  let lastProgress = 0;
  /** Starts waiting requests as far as the limits allow (set below, with the request queue). */
  let pump: () => void = () => {};

  const shed = (buffered: number) => {
    if (closed) return;
    closed = true;
    stopWatch();
    o.log(`${o.name}: closed: it read nothing for ${o.slowClientMs / 1000} s with ${buffered} bytes unsent (a client that does not read its replies)`);
    o.onShed?.();
    // terminate, not close: a close frame would wait behind the unsent bytes; this frees them now.
    ws.terminate();
  };

  const stopWatch = () => {
    if (watch) clearInterval(watch);
    watch = null;
  };

  const look = () => {
    if (closed || ws.readyState !== OPEN) return stopWatch();
    const buffered = ws.bufferedAmount;
    const now = Date.now();
    if (lastBuffered + addedSince - buffered > 0) lastProgress = now;
    lastBuffered = buffered;
    addedSince = 0;
    if (buffered <= o.backpressureBytes) {
      readingPaused = false;
      stopWatch();
      pump();
      return;
    }
    if (!readingPaused) {
      readingPaused = true;
      ws.pause();
    }
    if (now - lastProgress >= o.slowClientMs) shed(buffered);
  };

  /** After a send: over the cap, stop reading the client's requests and start watching it. */
  const checkFlow = () => {
    if (watch || closed) return;
    const buffered = ws.bufferedAmount;
    if (buffered <= o.backpressureBytes) return;
    lastBuffered = buffered;
    addedSince = 0;
    lastProgress = Date.now();
    readingPaused = true;
    ws.pause();
    watch = setInterval(look, WATCH_MS);
    watch.unref();
  };

  const send = (text: string) => {
    if (ws.readyState !== OPEN || closed) return;
    ws.send(text);
    if (watch) addedSince += Buffer.byteLength(text);
    else checkFlow();
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

  // Requests: at most MAX_IN_FLIGHT answered at once; later ones wait here, and while any wait (or
  // the client is over its cap) its socket is not read, so a flood costs the host a bounded amount.
  const waiting: RawFrame[] = [];
  let inFlight = 0;
  const answer = (frame: RawFrame) => {
    const [data, isBinary] = frame;
    if (isBinary) {
      reply({ id: null, ok: false, error: { code: 'invalid', message: 'binary frames are not accepted: send JSON text' } });
      return;
    }
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
    inFlight++;
    void answerFrame(text, o.dispatcher, (method, err) =>
      o.log(`${o.name}: ${method} threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    ).then((r) => {
      inFlight--;
      reply(r);
      pump();
    });
  };
  pump = () => {
    while (!closed && !readingPaused && inFlight < MAX_IN_FLIGHT && waiting.length > 0) answer(waiting.shift()!);
    if (closed || readingPaused) return;
    if (waiting.length > 0) ws.pause();
    else ws.resume();
  };
  ws.on('message', (data: RawData, isBinary: boolean) => {
    waiting.push([data, isBinary]);
    pump();
  });
  ws.on('error', (err: Error & { code?: string }) => {
    o.log(`${o.name}: ${err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'message over the size limit, closing with 1009' : `error: ${err.message}`}`);
  });
  ws.on('close', () => {
    closed = true;
    stopWatch();
    unsubscribe();
  });
}
