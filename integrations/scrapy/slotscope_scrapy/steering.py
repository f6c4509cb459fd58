"""What Slotscope's console can change in a running Scrapy crawl, applied on the reactor thread:
the engine's pause (plus a hold on the downloader's slots, so requests already handed to the
downloader wait too), stop, delays and concurrency for every slot or one, AutoThrottle's
attributes, per-slot pause and pins. What Scrapy cannot do is refused in words (Refused).

Settings use Slotscope's names and values (shared/settings.ts), which are Scrapy's; each applied
command returns its changes as [slot or None, name, old, new] for the crawl's change journal.
"""

from .protocol import SLOT_FIELDS  # noqa: F401  (documents the row this module's state feeds)


class Refused(Exception):
    """A command Scrapy cannot carry out; the message says why, for the console."""


# --- what the crawl runs with ------------------------------------------------------------------


def _default_delay(bridge):
    """The delay a new downloader slot gets (2.18+: Downloader._delay; before: spider.download_delay or DOWNLOAD_DELAY)."""
    d = bridge.downloader
    if hasattr(d, "_delay"):
        return float(d._delay)
    return float(getattr(bridge.spider, "download_delay", bridge.crawler.settings.getfloat("DOWNLOAD_DELAY")))


def _set_default_delay(bridge, value):
    d = bridge.downloader
    if hasattr(d, "_delay"):
        d._delay = value
    else:
        bridge.spider.download_delay = value


def effective_settings(bridge):
    """The settings the crawl runs with, under Slotscope's names (what its settings panel shows)."""
    s = bridge.crawler.settings
    d = bridge.downloader
    at = bridge.at
    spider = bridge.spider
    out = {
        "CONCURRENT_REQUESTS": int(d.total_concurrency),
        "CONCURRENT_REQUESTS_PER_DOMAIN": int(d.domain_concurrency),
        "CONCURRENT_REQUESTS_PER_IP": int(d.ip_concurrency),
        "DOWNLOAD_DELAY": float(at.mindelay) if at is not None else _default_delay(bridge),
        "RANDOMIZE_DOWNLOAD_DELAY": bool(d.randomize_delay),
        "AUTOTHROTTLE_ENABLED": at is not None,
        "AUTOTHROTTLE_START_DELAY": s.getfloat("AUTOTHROTTLE_START_DELAY"),
        "AUTOTHROTTLE_MAX_DELAY": float(getattr(at, "maxdelay", s.getfloat("AUTOTHROTTLE_MAX_DELAY"))),
        "AUTOTHROTTLE_TARGET_CONCURRENCY": float(getattr(at, "target_concurrency", s.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY"))),
        "AUTOTHROTTLE_DEBUG": bool(getattr(at, "debug", s.getbool("AUTOTHROTTLE_DEBUG"))),
        "ROBOTSTXT_OBEY": s.getbool("ROBOTSTXT_OBEY"),
        "DOWNLOAD_TIMEOUT": float(getattr(spider, "download_timeout", s.getfloat("DOWNLOAD_TIMEOUT"))),
        "DOWNLOAD_MAXSIZE": int(getattr(spider, "download_maxsize", s.getint("DOWNLOAD_MAXSIZE"))),
        "DOWNLOAD_WARNSIZE": int(getattr(spider, "download_warnsize", s.getint("DOWNLOAD_WARNSIZE"))),
        "USER_AGENT": str(getattr(spider, "user_agent", None) or s.get("USER_AGENT") or ""),
        "RETRY_ENABLED": s.getbool("RETRY_ENABLED"),
        "RETRY_TIMES": s.getint("RETRY_TIMES"),
        "RETRY_HTTP_CODES": [int(c) for c in s.getlist("RETRY_HTTP_CODES")],
        "RETRY_PRIORITY_ADJUST": s.getint("RETRY_PRIORITY_ADJUST"),
    }
    slots = {}
    raw = s.getdict("DOWNLOAD_SLOTS") if "DOWNLOAD_SLOTS" in s else {}
    for key, conf in (raw or {}).items():
        if isinstance(conf, dict):
            slots[str(key)] = {k: conf[k] for k in ("concurrency", "delay", "randomize_delay") if k in conf}
    out["DOWNLOAD_SLOTS"] = slots
    return out


def overridden_settings(settings):
    """Scrapy's own "Overridden settings" (non-default values), as JSON."""
    from .bridge import json_safe

    try:
        from scrapy.settings import overridden_settings as overridden

        pairs = overridden(settings)
    except Exception:
        return {}
    out = {}
    for name, value in pairs:
        if name.startswith("SLOTSCOPE_URL"):
            continue  # carries the token
        out[str(name)] = json_safe(value)
    return out


def crawl_state(bridge):
    engine = bridge.crawler.engine
    scheduled = None
    slot = getattr(engine, "_slot", None) or getattr(engine, "slot", None)
    scheduler = getattr(slot, "scheduler", None)
    if scheduler is not None:
        try:
            scheduled = len(scheduler)
        except Exception:
            scheduled = None
    return {
        "paused": bool(getattr(engine, "paused", False)),
        "held": bridge.held_all,
        "inFlight": len(bridge.downloader.active),
        "scheduled": scheduled,
    }


# --- holding and kicking slots ----------------------------------------------------------------


def _is_held(slot):
    from .bridge import _Hold

    return isinstance(slot.latercall, _Hold)


def hold(slot):
    from .bridge import HOLD

    lc = slot.latercall
    if _is_held(slot):
        return
    if lc is not None:
        _cancel(lc)
    slot.latercall = HOLD


def release(bridge, slot):
    if _is_held(slot):
        slot.latercall = None
        bridge.process_queue(slot)


def _cancel(lc):
    active = getattr(lc, "active", None)
    if active is None or active():
        lc.cancel()


def kick(bridge, slot):
    """Re-runs the slot's queue now, so a shorter delay or a higher concurrency applies at once."""
    if _is_held(slot):
        return
    if slot.latercall is not None:
        _cancel(slot.latercall)
        slot.latercall = None
    bridge.process_queue(slot)


def kick_engine(bridge):
    engine = bridge.crawler.engine
    slot = getattr(engine, "_slot", None) or getattr(engine, "slot", None)
    nextcall = getattr(slot, "nextcall", None)
    if nextcall is not None:
        nextcall.schedule()


def setup_new_slot(bridge, key, slot):
    """A slot Scrapy just created (or re-created after its garbage collection): the console's
    per-slot settings, pins and pause apply to it too, before its first request starts."""
    name = str(key)
    over = bridge.slot_overrides.get(name)
    if over:
        if "concurrency" in over:
            slot.concurrency = int(over["concurrency"])
        if "delay" in over:
            slot.delay = float(over["delay"])
        if "randomize_delay" in over:
            slot.randomize_delay = bool(over["randomize_delay"])
    if key in bridge.pins:
        bridge.pre_pin[key] = slot.delay
        slot.delay = bridge.pins[key]
    if key in bridge.conc_pins:
        bridge.pre_conc[key] = slot.concurrency
        slot.concurrency = bridge.conc_pins[key]
    if bridge.held_all or key in bridge.paused_slots:
        hold(slot)


def _slot_key(bridge, name):
    """The downloader's key for a slot named `name` on the wire (keys are text but for odd meta values)."""
    slots = bridge.downloader.slots
    if name in slots:
        return name
    for k in slots:
        if str(k) == name:
            return k
    for k in list(bridge.pins) + list(bridge.conc_pins) + list(bridge.paused_slots):
        if str(k) == name:
            return k
    return name


# --- commands ---------------------------------------------------------------------------------


def apply(bridge, cmd):
    op = cmd.get("op")
    fn = _OPS.get(op)
    if fn is None:
        raise Refused("the bridge does not know the command %r (is slotscope-scrapy older than Slotscope?)" % (op,))
    return fn(bridge, cmd)


def _pause(bridge, cmd):
    engine = bridge.crawler.engine
    was = bool(engine.paused) and bridge.held_all
    engine.pause()
    bridge.held_all = True
    for slot in list(bridge.downloader.slots.values()):
        hold(slot)
    return [] if was else [[None, "paused", False, True]]


def _resume(bridge, cmd):
    engine = bridge.crawler.engine
    was = bool(engine.paused) or bridge.held_all
    bridge.held_all = False
    engine.unpause()
    for key, slot in list(bridge.downloader.slots.items()):
        if key not in bridge.paused_slots:
            release(bridge, slot)
    kick_engine(bridge)
    return [[None, "paused", True, False]] if was else []


def _stop(bridge, cmd):
    """Closes the spider like Scrapy's close_spider, but first drops the requests waiting in the
    downloader's slots (held or delayed): Scrapy's close would wait until each of them was
    downloaded, one delay apart. Transfers already under way finish."""
    from scrapy.exceptions import IgnoreRequest
    from twisted.python.failure import Failure

    reason = str(cmd.get("reason") or "slotscope_stop")
    engine = bridge.crawler.engine
    waiting = []
    for slot in list(bridge.downloader.slots.values()):
        while slot.queue:
            waiting.append(slot.queue.popleft())
    for request, d in waiting:
        if not d.called:
            d.errback(Failure(IgnoreRequest("dropped: the crawl was stopped from Slotscope")))
    engine.unpause()
    if hasattr(engine, "close_spider_async"):
        from scrapy.utils.defer import deferred_from_coro

        d = deferred_from_coro(engine.close_spider_async(reason=reason))
    else:
        d = engine.close_spider(bridge.spider, reason)
    if d is not None and hasattr(d, "addErrback"):
        d.addErrback(lambda f: None)
    return [[None, "stopped", None, reason]]


def _slot_pause(bridge, cmd):
    name = cmd["slot"]
    key = _slot_key(bridge, name)
    paused = bool(cmd["paused"])
    was = key in bridge.paused_slots
    slot = bridge.downloader.slots.get(key)
    if paused:
        bridge.paused_slots.add(key)
        if slot is not None:
            hold(slot)
    else:
        bridge.paused_slots.discard(key)
        if slot is not None and not bridge.held_all:
            release(bridge, slot)
    return [] if was == paused else [[name, "paused", was, paused]]


def _pin_delay(bridge, cmd):
    name = cmd["slot"]
    key = _slot_key(bridge, name)
    seconds = cmd.get("seconds")
    old = bridge.pins.get(key)
    slot = bridge.downloader.slots.get(key)
    if seconds is None:
        if key not in bridge.pins:
            return []
        del bridge.pins[key]
        prev = bridge.pre_pin.pop(key, None)
        if slot is not None and prev is not None:
            slot.delay = prev
            kick(bridge, slot)
        return [[name, "pin_delay", old, None]]
    seconds = float(seconds)
    if slot is not None:
        if key not in bridge.pins:
            bridge.pre_pin[key] = slot.delay
        slot.delay = seconds
        kick(bridge, slot)
    bridge.pins[key] = seconds
    return [] if old == seconds else [[name, "pin_delay", old, seconds]]


def _pin_concurrency(bridge, cmd):
    name = cmd["slot"]
    key = _slot_key(bridge, name)
    value = cmd.get("value")
    old = bridge.conc_pins.get(key)
    slot = bridge.downloader.slots.get(key)
    if value is None:
        if key not in bridge.conc_pins:
            return []
        del bridge.conc_pins[key]
        prev = bridge.pre_conc.pop(key, None)
        if slot is not None and prev is not None:
            slot.concurrency = prev
            kick(bridge, slot)
        return [[name, "pin_concurrency", old, None]]
    value = int(value)
    if slot is not None:
        if key not in bridge.conc_pins:
            bridge.pre_conc[key] = slot.concurrency
        slot.concurrency = value
        kick(bridge, slot)
    bridge.conc_pins[key] = value
    return [] if old == value else [[name, "pin_concurrency", old, value]]


def _clear_pins(bridge, cmd):
    out = []
    out += _pin_delay(bridge, {"slot": cmd["slot"], "seconds": None})
    out += _pin_concurrency(bridge, {"slot": cmd["slot"], "value": None})
    return out


# --- settings ---------------------------------------------------------------------------------


def _need_at(bridge, name):
    if bridge.at is None:
        raise Refused(
            "%s: AutoThrottle is off in this crawl (AUTOTHROTTLE_ENABLED was false when the spider opened); "
            "Scrapy builds its extensions once, so it cannot be switched on while the spider runs" % name
        )


def _every_slot(bridge, skip):
    for key, slot in list(bridge.downloader.slots.items()):
        if not skip(key):
            yield key, slot


def _set_download_delay(bridge, v):
    v = float(v)
    if bridge.at is not None:
        bridge.at.mindelay = v
        _set_default_delay(bridge, max(v, float(bridge.current.get("AUTOTHROTTLE_START_DELAY", v))))
        for key, slot in _every_slot(bridge, lambda k: k in bridge.pins):
            if slot.delay < v:
                slot.delay = v
    else:
        _set_default_delay(bridge, v)
        for key, slot in _every_slot(bridge, lambda k: k in bridge.pins or "delay" in bridge.slot_overrides.get(str(k), {})):
            slot.delay = v
    _kick_all(bridge)


def _set_randomize(bridge, v):
    if v not in (False, 0.5):
        raise Refused(
            "RANDOMIZE_DOWNLOAD_DELAY: Scrapy draws each gap from 0.5x to 1.5x the delay (true) or not at all (false); "
            "it has no other factor (%r)" % (v,)
        )
    on = v is not False
    bridge.downloader.randomize_delay = on
    for key, slot in _every_slot(bridge, lambda k: "randomize_delay" in bridge.slot_overrides.get(str(k), {})):
        slot.randomize_delay = on


def _set_total(bridge, v):
    v = int(v)
    if v == 0 and bridge.version < (2, 18):
        raise Refused(
            "CONCURRENT_REQUESTS: 0 means no limit only from Scrapy 2.18; in this Scrapy it would stop every download"
        )
    bridge.downloader.total_concurrency = v
    kick_engine(bridge)


def _set_per_domain(bridge, v):
    d = bridge.downloader
    if d.ip_concurrency:
        raise Refused(
            "CONCURRENT_REQUESTS_PER_DOMAIN: this crawl keys its slots by IP address (CONCURRENT_REQUESTS_PER_IP = %d), "
            "so their concurrency is CONCURRENT_REQUESTS_PER_IP's" % d.ip_concurrency
        )
    v = int(v)
    d.domain_concurrency = v
    if hasattr(bridge.spider, "max_concurrent_requests"):
        bridge.spider.max_concurrent_requests = v
    for key, slot in _every_slot(bridge, lambda k: k in bridge.conc_pins or "concurrency" in bridge.slot_overrides.get(str(k), {})):
        slot.concurrency = v
    _kick_all(bridge)


def _set_per_ip(bridge, v):
    d = bridge.downloader
    v = int(v)
    if not d.ip_concurrency or v == 0:
        raise Refused(
            "CONCURRENT_REQUESTS_PER_IP: Scrapy keys slots by host or by IP address from when the spider opens "
            "(now by %s); switching while it runs would split every slot in two" % ("IP" if d.ip_concurrency else "host")
        )
    d.ip_concurrency = v
    for key, slot in _every_slot(bridge, lambda k: k in bridge.conc_pins or "concurrency" in bridge.slot_overrides.get(str(k), {})):
        slot.concurrency = v
    _kick_all(bridge)


def _set_target(bridge, v):
    _need_at(bridge, "AUTOTHROTTLE_TARGET_CONCURRENCY")
    v = float(v)
    if not v > 0:
        raise Refused("AUTOTHROTTLE_TARGET_CONCURRENCY: must be higher than 0 (%r)" % (v,))
    bridge.at.target_concurrency = v


def _set_start(bridge, v):
    _need_at(bridge, "AUTOTHROTTLE_START_DELAY")
    _set_default_delay(bridge, max(float(bridge.at.mindelay), float(v)))


def _set_max(bridge, v):
    _need_at(bridge, "AUTOTHROTTLE_MAX_DELAY")
    v = float(v)
    bridge.at.maxdelay = v
    for key, slot in _every_slot(bridge, lambda k: k in bridge.pins):
        if slot.delay > v:
            slot.delay = v
    _kick_all(bridge)


def _set_debug(bridge, v):
    _need_at(bridge, "AUTOTHROTTLE_DEBUG")
    bridge.at.debug = bool(v)


def _set_download_slots(bridge, v):
    if not isinstance(v, dict):
        raise Refused("DOWNLOAD_SLOTS: a map of slot key to {concurrency, delay, randomize_delay}")
    new = {}
    for name, conf in v.items():
        conf = dict(conf or {})
        new[str(name)] = conf
        key = _slot_key(bridge, str(name))
        slot = bridge.downloader.slots.get(key)
        if slot is None:
            continue
        if "concurrency" in conf and key not in bridge.conc_pins:
            slot.concurrency = int(conf["concurrency"])
        if "delay" in conf and key not in bridge.pins:
            slot.delay = float(conf["delay"])
        if "randomize_delay" in conf:
            slot.randomize_delay = bool(conf["randomize_delay"])
        kick(bridge, slot)
    bridge.slot_overrides = new


def _kick_all(bridge):
    for slot in list(bridge.downloader.slots.values()):
        kick(bridge, slot)
    kick_engine(bridge)


_SETTERS = {
    "DOWNLOAD_DELAY": _set_download_delay,
    "RANDOMIZE_DOWNLOAD_DELAY": _set_randomize,
    "CONCURRENT_REQUESTS": _set_total,
    "CONCURRENT_REQUESTS_PER_DOMAIN": _set_per_domain,
    "CONCURRENT_REQUESTS_PER_IP": _set_per_ip,
    "AUTOTHROTTLE_TARGET_CONCURRENCY": _set_target,
    "AUTOTHROTTLE_START_DELAY": _set_start,
    "AUTOTHROTTLE_MAX_DELAY": _set_max,
    "AUTOTHROTTLE_DEBUG": _set_debug,
    "DOWNLOAD_SLOTS": _set_download_slots,
}

# Checks that need no change to be made first (so a change set is refused whole).
_CHECKS = {
    "AUTOTHROTTLE_TARGET_CONCURRENCY": lambda b, v: _need_at(b, "AUTOTHROTTLE_TARGET_CONCURRENCY"),
    "AUTOTHROTTLE_START_DELAY": lambda b, v: _need_at(b, "AUTOTHROTTLE_START_DELAY"),
    "AUTOTHROTTLE_MAX_DELAY": lambda b, v: _need_at(b, "AUTOTHROTTLE_MAX_DELAY"),
    "AUTOTHROTTLE_DEBUG": lambda b, v: _need_at(b, "AUTOTHROTTLE_DEBUG"),
}


def _settings(bridge, cmd):
    changes = cmd.get("changes") or {}
    for name, value in changes.items():
        if name not in _SETTERS:
            raise Refused("%s cannot be changed in a running Scrapy crawl" % name)
        check = _CHECKS.get(name)
        if check is not None:
            check(bridge, value)
        if name == "RANDOMIZE_DOWNLOAD_DELAY" and value not in (False, 0.5):
            _set_randomize(bridge, value)
        if name == "CONCURRENT_REQUESTS" and int(value) == 0 and bridge.version < (2, 18):
            _set_total(bridge, value)
        if name == "CONCURRENT_REQUESTS_PER_DOMAIN" and bridge.downloader.ip_concurrency:
            _set_per_domain(bridge, value)
        if name == "CONCURRENT_REQUESTS_PER_IP" and (not bridge.downloader.ip_concurrency or int(value) == 0):
            _set_per_ip(bridge, value)
    out = []
    for name, value in changes.items():
        old = bridge.current.get(name)
        _SETTERS[name](bridge, value)
        new = value
        bridge.current[name] = new
        if old != new:
            out.append([None, name, old, new])
    return out


_OPS = {
    "pause": _pause,
    "resume": _resume,
    "stop": _stop,
    "settings": _settings,
    "slot-pause": _slot_pause,
    "pin-delay": _pin_delay,
    "pin-concurrency": _pin_concurrency,
    "clear-pins": _clear_pins,
}
