"""SlotscopeBridge: the Scrapy extension. It records every download (a response or a failure) with
its downloader slot, latency and the slot's delay before and after AutoThrottle, and applies the
commands Slotscope's console sends back, on the reactor thread. The network is sender.py's.

Where Scrapy has no public hook, the bridge reads its downloader's slots (active, queue,
transferring, delay, concurrency) and wraps two callables at spider_opened: AutoThrottle's
response_downloaded receiver (to read slot.delay around it, and to skip it for a pinned slot) and
the download handlers' entry point (the transfer's start, and failures, which send no signal).
Every part of it is guarded: an error inside the bridge is logged once and the crawl goes on.
"""

import inspect
import logging
import os
import platform
import time
import uuid

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import defer, task

from . import steering
from .protocol import parse_slotscope_url
from .sender import Sender

logger = logging.getLogger("slotscope_scrapy")

BRIDGE_VERSION = "0.1.0"

# Failure kinds as Slotscope names them (shared/types.ts FAILURE_KINDS), by exception class name.
_FAILURE_KINDS = {
    "TimeoutError": "timeout",
    "TCPTimedOutError": "timeout",
    "UserTimeoutError": "timeout",
    "DNSLookupError": "dns",
    "ConnectionRefusedError": "connect-refused",
    "ConnectError": "connect-refused",
    "ConnectionLost": "connect-reset",
    "ConnectionDone": "connect-reset",
    "ConnectionAborted": "connect-reset",
    "ConnectionResetError": "connect-reset",
    "ResponseNeverReceived": "connect-reset",
    "ResponseFailed": "connect-reset",
    "PotentialDataLoss": "connect-reset",
    "SSLError": "tls",
    "Error": "other",
    "CancelledError": "cancelled",
}


def _scrapy_version():
    import scrapy

    return getattr(scrapy, "__version__", "?")


def _version_tuple():
    import scrapy

    info = getattr(scrapy, "version_info", None)
    if info:
        return tuple(v for v in info if isinstance(v, int))
    return ()


def failure_kind(exc):
    """Slotscope's name for a download failure."""
    name = type(exc).__name__
    mod = type(exc).__module__ or ""
    if mod.startswith("OpenSSL") or "SSL" in name or "TLS" in name:
        return "tls"
    if name == "CancelledError" and "max" in str(exc).lower() and "size" in str(exc).lower():
        return "maxsize"
    if name in ("ResponseFailed", "ResponseNeverReceived"):
        for reason in getattr(exc, "reasons", None) or ():
            inner = getattr(reason, "value", None)
            if inner is not None and type(inner).__name__ not in ("ResponseFailed", "ResponseNeverReceived"):
                kind = failure_kind(inner)
                if kind != "other":
                    return kind
    return _FAILURE_KINDS.get(name, "other")


def json_safe(value, depth=0):
    """A settings or stats value as JSON: numbers, text, lists and maps kept, anything else as its repr."""
    if depth > 8:
        return repr(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if hasattr(value, "copy_to_dict"):
        return json_safe(value.copy_to_dict(), depth + 1)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, type):
        return "%s.%s" % (value.__module__, value.__qualname__)
    return repr(value)


class _Hold:
    """Stands in a downloader slot's `latercall` while the slot is paused: Scrapy's downloader does
    not start a slot's queued requests while its latercall is pending (2.8: `.active()`; 2.14+: truthy)."""

    def active(self):
        return True

    def cancel(self):
        pass

    def __bool__(self):
        return True

    def __repr__(self):
        return "<slotscope hold>"


HOLD = _Hold()


class SlotscopeBridge:
    def __init__(self, crawler, endpoint):
        self.crawler = crawler
        self.endpoint = endpoint
        s = crawler.settings
        self.interval = s.getfloat("SLOTSCOPE_INTERVAL", 0.25)
        self.buffer_size = s.getint("SLOTSCOPE_BUFFER", 50000)
        self.close_timeout = s.getfloat("SLOTSCOPE_CLOSE_TIMEOUT", 5.0)
        self.version = _version_tuple()
        self.spider = None
        self.downloader = None
        self.at = None
        self._at_receiver = None
        self.sender = None
        self._loop = None
        self._wrapped = []
        self._process_queue_takes_spider = False
        # Requests on their way: id(request) -> reached-the-downloader time; then the attempt's [start, reached].
        self._reached = {}
        self._attempts = {}
        # Slot objects seen, by key (a new object under a key is a new or re-created slot).
        self._known = {}
        # Steering state (steering.py): pins, per-slot pause, DOWNLOAD_SLOTS overrides, the crawl's hold.
        self.pins = {}
        self.pre_pin = {}
        self.conc_pins = {}
        self.pre_conc = {}
        self.paused_slots = set()
        self.slot_overrides = {}
        self.held_all = False
        self.current = {}
        self._applied = {}
        self._failed_once = False
        self._closed = False

    @classmethod
    def from_crawler(cls, crawler):
        url = crawler.settings.get("SLOTSCOPE_URL")
        if not url:
            raise NotConfigured("SLOTSCOPE_URL is not set: set it to the URL `slotscope serve` prints")
        try:
            endpoint = parse_slotscope_url(url)
        except ValueError as e:
            raise NotConfigured(str(e)) from None
        ext = cls(crawler, endpoint)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.request_reached_downloader, signal=signals.request_reached_downloader)
        crawler.signals.connect(ext.request_left_downloader, signal=signals.request_left_downloader)
        return ext

    # --- guard ----------------------------------------------------------------------------

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except Exception:
            if not self._failed_once:
                self._failed_once = True
                logger.exception("Slotscope bridge: internal error in %s (the crawl goes on; reported once)", getattr(fn, "__name__", fn))
            return None

    # --- spider_opened ---------------------------------------------------------------------

    def spider_opened(self, spider):
        self._guard(self._open, spider)

    def _open(self, spider):
        from scrapy.extensions.throttle import AutoThrottle

        self.spider = spider
        engine = self.crawler.engine
        self.downloader = engine.downloader
        params = inspect.signature(type(self.downloader)._process_queue).parameters
        self._process_queue_takes_spider = "spider" in params
        for ext in getattr(getattr(self.crawler, "extensions", None), "middlewares", ()):
            if isinstance(ext, AutoThrottle):
                self.at = ext
                break
        # AutoThrottle's receiver runs inside ours, so the slot's delay is read just before and after it.
        receiver = getattr(self.at, "_response_downloaded", None) if self.at is not None else None
        if receiver is not None:
            self.crawler.signals.disconnect(receiver, signal=signals.response_downloaded)
            self._at_receiver = receiver
        self.crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        self._wrap_handlers()
        self.current = steering.effective_settings(self)
        self.slot_overrides = {k: dict(v) for k, v in (self.current.get("DOWNLOAD_SLOTS") or {}).items()}
        open_info = {
            "spider": str(getattr(spider, "name", "spider")),
            "scrapyVersion": _scrapy_version(),
            "bridgeVersion": BRIDGE_VERSION,
            "python": platform.python_version(),
            "pid": os.getpid(),
            "startedAt": time.time() * 1000,
            "startUrls": [u for u in list(getattr(spider, "start_urls", None) or [])[:20] if isinstance(u, str)],
            "settings": self.current,
            "overridden": steering.overridden_settings(self.crawler.settings),
            "autothrottle": self.at is not None,
        }
        self.sender = Sender(
            self.endpoint,
            uuid.uuid4().hex,
            open_info,
            self._commands_from_thread,
            interval=self.interval,
            buffer_size=self.buffer_size,
            user_agent="slotscope-scrapy/%s (Scrapy %s)" % (BRIDGE_VERSION, _scrapy_version()),
        )
        self._snapshot()
        self.sender.start()
        self._loop = task.LoopingCall(self._guard, self._snapshot)
        self._loop.start(self.interval, now=False)

    def _wrap_handlers(self):
        handlers = getattr(self.downloader, "handlers", None)
        if handlers is None:
            return
        for name in ("download_request", "download_request_async"):
            orig = getattr(handlers, name, None)
            if orig is None:
                continue
            wrapper = self._async_wrapper(orig) if inspect.iscoroutinefunction(orig) else self._sync_wrapper(orig)
            setattr(handlers, name, wrapper)
            self._wrapped.append((handlers, name))

    def _sync_wrapper(self, orig):
        def download_request(request, *args, **kwargs):
            started = self._guard(self._attempt_started, request)
            try:
                result = orig(request, *args, **kwargs)
            except Exception as e:
                if started:
                    self._guard(self._attempt_failed, request, e)
                raise
            if started and isinstance(result, defer.Deferred):
                result.addErrback(self._errback, request)
            return result

        return download_request

    def _async_wrapper(self, orig):
        async def download_request_async(request, *args, **kwargs):
            started = self._guard(self._attempt_started, request)
            try:
                return await orig(request, *args, **kwargs)
            except BaseException as e:
                if started:
                    self._guard(self._attempt_failed, request, e)
                raise

        return download_request_async

    def _errback(self, failure, request):
        self._guard(self._attempt_failed, request, failure.value)
        return failure

    # --- per request ------------------------------------------------------------------------

    def request_reached_downloader(self, request, spider):
        self._guard(self._reached_downloader, request)

    def _reached_downloader(self, request):
        if self.downloader is None:
            return
        self._reached[id(request)] = time.time()
        key = request.meta.get("download_slot")
        slot = self.downloader.slots.get(key)
        if slot is not None and self._known.get(key) is not slot:
            self._known[key] = slot
            steering.setup_new_slot(self, key, slot)

    def request_left_downloader(self, request, spider):
        self._reached.pop(id(request), None)
        self._attempts.pop(id(request), None)

    def _attempt_started(self, request):
        k = id(request)
        if k in self._attempts:
            return False
        self._attempts[k] = (time.time(), self._reached.pop(k, None))
        return True

    def _attempt_failed(self, request, exc):
        a = self._attempts.pop(id(request), None)
        if a is None or self.sender is None:
            return
        now = time.time()
        key = request.meta.get("download_slot")
        slot = self.downloader.slots.get(key) if key is not None else None
        delay = float(slot.delay) if slot is not None else 0.0
        started, reached = a
        message = str(exc) or type(exc).__name__
        self.sender.add_record(
            [
                now * 1000,
                started * 1000,
                max(0.0, (started - reached) * 1000) if reached else 0,
                str(key if key is not None else ""),
                request.url,
                request.method,
                None,
                None,
                None,
                0,
                len(slot.transferring) if slot is not None else 1,
                delay,
                delay,
                self._cause(key, delay),
                int(request.meta.get("depth", 0) or 0),
                None,
                int(request.meta.get("retry_times", 0) or 0),
                failure_kind(exc),
                ("%s: %s" % (type(exc).__name__, message))[:1000],
                False,
            ]
        )

    def response_downloaded(self, response, request, spider):
        key = request.meta.get("download_slot")
        slot = self.downloader.slots.get(key) if (key is not None and self.downloader is not None) else None
        before = float(slot.delay) if slot is not None else None
        at_ran = False
        try:
            if self._at_receiver is not None and key not in self.pins:
                at_ran = True
                self._at_receiver(response=response, request=request, spider=spider)
        finally:
            self._guard(self._record_response, response, request, key, slot, before, at_ran)

    def _record_response(self, response, request, key, slot, before, at_ran):
        if self.sender is None:
            return
        now = time.time()
        a = self._attempts.pop(id(request), None)
        started, reached = a if a is not None else (None, None)
        latency = request.meta.get("download_latency")
        latency = float(latency) if isinstance(latency, (int, float)) else None
        after = float(slot.delay) if slot is not None else 0.0
        if before is None:
            before = after
        if started is None:
            started = now - (latency or 0.0)
        debug = (
            at_ran
            and bool(getattr(self.at, "debug", False))
            and latency is not None
            and slot is not None
            and not (self.version >= (2, 12) and request.meta.get("autothrottle_dont_adjust_delay", False) is True)
        )
        ctype = response.headers.get(b"Content-Type") if hasattr(response, "headers") else None
        self.sender.add_record(
            [
                now * 1000,
                started * 1000,
                max(0.0, (started - reached) * 1000) if reached else 0,
                str(key if key is not None else ""),
                request.url,
                request.method,
                int(response.status),
                latency,
                max(0.0, (now - started) - latency) if latency is not None else None,
                len(response.body),
                len(slot.transferring) if slot is not None else 1,
                before,
                after,
                self._cause(key, after),
                int(request.meta.get("depth", 0) or 0),
                ctype.decode("latin-1")[:1000] if isinstance(ctype, bytes) else None,
                int(request.meta.get("retry_times", 0) or 0),
                None,
                None,
                bool(debug),
            ]
        )

    def _cause(self, key, delay):
        if key in self.pins:
            return "pin"
        if self.at is not None:
            floor = getattr(self.at, "mindelay", 0) or 0
            return "floor" if floor > 0 and delay <= floor else "autothrottle"
        return "floor" if delay > 0 else "none"

    # --- the slot table ---------------------------------------------------------------------

    def _snapshot(self):
        if self.downloader is None or self.sender is None:
            return
        now = time.time()
        mono = time.monotonic()
        rows = {}
        for key, slot in list(self.downloader.slots.items()):
            held = isinstance(slot.latercall, _Hold)
            queued = len(slot.queue)
            next_at = None
            if queued and not held:
                seen = slot.lastseen or 0
                if seen > 1e9:  # Scrapy < 2.16 keeps time(); later versions monotonic()
                    base = seen
                elif seen > 0:
                    base = now - (mono - seen)
                else:
                    base = now
                next_at = round(max(base + float(slot.delay), now) * 1000)
            name = str(key)
            rows[name] = [
                name,
                len(slot.transferring),
                queued,
                len(slot.active),
                float(slot.delay),
                int(slot.concurrency),
                bool(slot.randomize_delay),
                held,
                self.pins.get(key),
                self.conc_pins.get(key),
                next_at,
            ]
        for key in list(self._known):
            if key not in self.downloader.slots:
                del self._known[key]
        self.sender.snapshot = (rows, steering.crawl_state(self))

    # --- commands ---------------------------------------------------------------------------

    def _commands_from_thread(self, commands):
        from twisted.internet import reactor

        reactor.callFromThread(self._guard, self.apply_commands, commands)

    def apply_commands(self, commands):
        acks = []
        for cmd in commands:
            cid = cmd.get("id")
            if cid in self._applied:
                acks.append(self._applied[cid])
                continue
            try:
                changes = steering.apply(self, cmd)
                ack = {"id": cid, "ok": True, "at": time.time() * 1000, "changes": changes}
            except steering.Refused as e:
                ack = {"id": cid, "ok": False, "at": time.time() * 1000, "message": str(e)}
            except Exception as e:
                logger.exception("Slotscope bridge: command %r failed", cmd.get("op"))
                ack = {"id": cid, "ok": False, "at": time.time() * 1000, "message": "the bridge failed to apply it: %s: %s" % (type(e).__name__, e)}
            self._applied[cid] = ack
            acks.append(ack)
        # The slot rows that go with the acks show the effect at once, not an interval later.
        self._guard(self._snapshot)
        for ack in acks:
            self.sender.add_ack(ack)

    # --- helpers for steering.py ------------------------------------------------------------

    def process_queue(self, slot):
        if self._process_queue_takes_spider:
            self.downloader._process_queue(self.spider, slot)
        else:
            self.downloader._process_queue(slot)

    # --- spider_closed ----------------------------------------------------------------------

    def spider_closed(self, spider, reason):
        if self.sender is None or self._closed:
            return None
        self._closed = True
        from twisted.internet import reactor

        d = defer.Deferred()
        self._guard(self._snapshot)
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for handlers, name in self._wrapped:
            try:
                delattr(handlers, name)
            except AttributeError:
                pass
        self._wrapped = []
        stats = {}
        try:
            stats = {str(k): json_safe(v) for k, v in self.crawler.stats.get_stats().items()}
        except Exception:
            pass
        close = {"t": time.time() * 1000, "reason": str(reason), "stats": stats}

        def finish(sent, unsent):
            if d.called:
                return
            try:
                self.crawler.stats.set_value("slotscope/records_sent", sent)
                self.crawler.stats.set_value("slotscope/records_unsent", unsent)
            except Exception:
                pass
            if unsent:
                logger.info("Slotscope: %d records sent to %s, %d could not be sent", sent, self.endpoint.shown, unsent)
            else:
                logger.info("Slotscope: %d records sent to %s", sent, self.endpoint.shown)
            self._reached.clear()
            self._attempts.clear()
            d.callback(None)

        self.sender.finish(close, self.close_timeout, lambda sent, unsent: reactor.callFromThread(finish, sent, unsent))
        # A safety net: the spider never waits much longer than SLOTSCOPE_CLOSE_TIMEOUT.
        reactor.callLater(self.close_timeout + 1.0, lambda: finish(self.sender.sent, self.sender.unsent))
        return d
