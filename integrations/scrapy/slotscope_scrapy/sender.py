"""The bridge's only network code: a daemon thread that posts batches to Slotscope every interval
and hands the commands in Slotscope's answers to the reactor. Nothing here runs on the reactor.

The reactor thread only appends to deques (thread-safe in CPython) and replaces the slot snapshot
(one reference assignment); this thread drains them. A batch that fails is sent again, unchanged
(same seq: Slotscope applies a seq once), after a backoff; records that arrive meanwhile wait in a
bounded deque, the oldest dropped (and counted) when it is full.
"""

import collections
import http.client
import json
import logging
import threading
import time

from .protocol import PROTOCOL_VERSION

logger = logging.getLogger("slotscope_scrapy")

# Records per batch; more waiting are sent at once, without waiting for the interval.
MAX_BATCH = 2000
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 5.0
HTTP_TIMEOUT = 10.0


def _json_default(o):
    # Anything the bridge did not turn into JSON itself (it should have): its text.
    return str(o)


class Sender(threading.Thread):
    def __init__(self, endpoint, session, open_info, on_commands, interval=0.25, buffer_size=50000, user_agent="slotscope-scrapy"):
        super().__init__(name="slotscope-sender", daemon=True)
        self.endpoint = endpoint
        self.session = session
        self.interval = max(0.05, float(interval))
        self.buffer_size = max(1000, int(buffer_size))
        self.user_agent = user_agent
        self._on_commands = on_commands
        self._open = open_info
        # Filled by the reactor thread.
        self.records = collections.deque()
        self.events = collections.deque()
        self.acks = collections.deque()
        self.snapshot = None
        self.dropped = 0
        # This thread's own state.
        self.sent = 0
        self.refused = 0
        self.crawl_id = None
        self._seq = 0
        self._opened = False
        self._pending = None
        self._last_slots = {}
        self._handed = set()
        self._conn = None
        self._failing = False
        self._warned = False
        self._refusals_logged = 0
        self._wake = threading.Event()
        self._close = None
        self._deadline = None
        self._on_done = None
        self.done = threading.Event()

    # --- called on the reactor thread -------------------------------------------------------

    def add_record(self, record):
        if len(self.records) >= self.buffer_size:
            self.records.popleft()
            self.dropped += 1
        self.records.append(record)

    def add_event(self, event):
        if len(self.events) < 10000:
            self.events.append(event)

    def add_ack(self, ack):
        self.acks.append(ack)
        self._wake.set()

    def finish(self, close_info, timeout, on_done):
        """Sends what is left and the close information, for at most `timeout` seconds (1.5 s
        when Slotscope is unreachable), then calls on_done(sent, unsent) from this thread."""
        self._on_done = on_done
        limit = min(timeout, 1.5) if self._failing else timeout
        self._deadline = time.monotonic() + max(0.1, limit)
        self._close = close_info
        self._wake.set()
        if not self.is_alive():
            self._report()

    @property
    def unsent(self):
        pending = len(self._pending["responses"]) if self._pending else 0
        return self.dropped + self.refused + len(self.records) + pending

    # --- this thread ------------------------------------------------------------------------

    def run(self):
        backoff = BACKOFF_FIRST
        try:
            while True:
                if self._deadline is not None and time.monotonic() > self._deadline:
                    break
                if self._pending is None:
                    self._pending = self._build()
                batch = self._pending
                outcome = self._send(batch)
                if outcome == "sent":
                    backoff = BACKOFF_FIRST
                    if "close" in batch:
                        break
                    if len(self.records) >= MAX_BATCH or (self._close is not None):
                        continue
                    self._wait(self.interval)
                elif outcome == "again":
                    continue
                else:
                    if self._deadline is not None:
                        break
                    self._wait(backoff)
                    backoff = min(BACKOFF_MAX, backoff * 2)
        except Exception:  # never let the thread die silently: the crawl goes on either way
            logger.exception("Slotscope bridge: the sender stopped")
        finally:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:
                    pass
            self._report()

    def _report(self):
        if self.done.is_set():
            return
        self.done.set()
        if self._on_done is not None:
            self._on_done(self.sent, self.unsent)

    def _wait(self, seconds):
        self._wake.wait(seconds)
        self._wake.clear()

    def _build(self):
        n = min(len(self.records), MAX_BATCH)
        responses = [self.records.popleft() for _ in range(n)]
        events = [self.events.popleft() for _ in range(len(self.events))]
        acks = [self.acks.popleft() for _ in range(len(self.acks))]
        batch = {"v": PROTOCOL_VERSION, "session": self.session, "seq": self._seq + 1, "responses": responses}
        if events:
            batch["events"] = events
        if acks:
            batch["acks"] = acks
        self._add_slots(batch)
        batch["dropped"] = self.dropped
        if not self._opened:
            batch["open"] = self._open
        if self._close is not None and not self.records:
            close = dict(self._close)
            close["unsent"] = self.dropped + self.refused
            batch["close"] = close
        return batch

    def _add_slots(self, batch, resend_all=False):
        snap = self.snapshot
        if snap is None:
            return
        slots, state = snap
        last = {} if resend_all else self._last_slots
        rows = [row for key, row in slots.items() if last.get(key) != row]
        gone = [key for key in last if key not in slots]
        batch["slots"] = rows
        if gone:
            batch["gone"] = gone
        batch["state"] = state
        batch["_slots"] = slots

    def _send(self, batch):
        committed = batch.pop("_slots", None)
        try:
            body = json.dumps(batch, separators=(",", ":"), default=_json_default, allow_nan=False).encode("utf-8")
        except ValueError:
            body = json.dumps(_finite(batch), separators=(",", ":"), default=_json_default).encode("utf-8")
        if committed is not None:
            batch["_slots"] = committed
        timeout = HTTP_TIMEOUT
        if self._deadline is not None:
            timeout = max(0.2, min(timeout, self._deadline - time.monotonic()))
        try:
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.endpoint.host, self.endpoint.port, timeout=timeout)
            else:
                self._conn.timeout = timeout
                if self._conn.sock is not None:
                    self._conn.sock.settimeout(timeout)
            self._conn.request(
                "POST",
                self.endpoint.path,
                body=body,
                headers={"Content-Type": "application/json", "User-Agent": self.user_agent},
            )
            resp = self._conn.getresponse()
            data = resp.read()
            if resp.will_close:
                self._conn.close()
                self._conn = None
        except (OSError, http.client.HTTPException) as e:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._failed("%s: %s" % (type(e).__name__, e))
            return "failed"
        status = resp.status
        if status == 200:
            try:
                answer = json.loads(data.decode("utf-8"))
            except ValueError:
                answer = {}
            self._accepted(batch, committed, answer)
            return "sent"
        text = data.decode("utf-8", "replace").strip()
        try:
            text = json.loads(text).get("error", text)
        except (ValueError, AttributeError):
            pass
        if status == 409:
            # Slotscope does not know this session (it restarted): open it again, with every slot.
            self._opened = False
            batch["open"] = self._open
            self._add_slots(batch, resend_all=True)
            if self._failing is False and self._refusals_logged < 3:
                logger.info("Slotscope: %s; opening the crawl again", text)
                self._refusals_logged += 1
            return "again"
        if status == 400:
            n = len(batch.get("responses", ()))
            self.refused += n
            self._refusals_logged += 1
            if self._refusals_logged <= 5 or self._refusals_logged % 100 == 0:
                logger.warning("Slotscope refused a batch of %d records: %s", n, text)
            # Acks in it were lost: their commands come again and are acknowledged again.
            for ack in batch.get("acks", ()):
                self._handed.discard(ack.get("id"))
            self._pending = None
            return "sent"
        self._failed("HTTP %d: %s" % (status, text[:200]))
        return "failed"

    def _accepted(self, batch, committed, answer):
        self._pending = None
        self._seq = batch["seq"]
        self._opened = True
        self.sent += len(batch.get("responses", ()))
        if committed is not None:
            self._last_slots = committed
        self.crawl_id = answer.get("crawlId", self.crawl_id)
        if self._failing:
            self._failing = False
            logger.info("Slotscope at %s is reachable again (%d records could not be sent so far)", self.endpoint.shown, self.dropped + self.refused)
        commands = [c for c in (answer.get("commands") or []) if isinstance(c, dict) and c.get("id") not in self._handed]
        if commands:
            for c in commands:
                self._handed.add(c.get("id"))
            self._on_commands(commands)

    def _failed(self, reason):
        if not self._warned:
            self._warned = True
            logger.warning(
                "Slotscope at %s is unreachable (%s); the crawl goes on, records are kept (up to %d) "
                "and sent when it is back, retrying with backoff",
                self.endpoint.shown,
                reason,
                self.buffer_size,
            )
        elif not self._failing:
            logger.info("Slotscope at %s is unreachable again (%s)", self.endpoint.shown, reason)
        self._failing = True


def _finite(o):
    if isinstance(o, float):
        return o if o == o and o not in (float("inf"), float("-inf")) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o
