"""The wire format between the bridge and Slotscope's ingest route, and the SLOTSCOPE_URL parser.

Slotscope's side of the same format is electron/core/scrapy/ingest-wire.ts; the two lists of
fields below must stay in the same order as RESPONSE_FIELDS and SLOT_FIELDS there.

One batch is one JSON object POSTed to ``/ingest/scrapy?token=…``::

    {"v": 1, "session": "…", "seq": 7,          # seq grows by one per accepted batch
     "open": {…},                                # until Slotscope has accepted one batch of the session
     "responses": [[…RESPONSE_FIELDS…], …],
     "events": [{"t", "kind", "code", "text", "slot"}],
     "acks": [{"id", "ok", "message", "at", "changes": [[slot, setting, old, new], …]}],
     "slots": [[…SLOT_FIELDS…], …], "gone": [key, …],   # changed and removed downloader slots
     "state": {"paused", "held", "inFlight", "scheduled"},
     "dropped": N,                               # records dropped so far (buffer full)
     "close": {"t", "reason", "stats", "unsent"}}

Slotscope answers ``{"ok": true, "crawlId": N, "commands": [...]}``; 400 refuses a batch whole
with a reason; 409 asks for ``open`` again (Slotscope restarted and does not know the session).
"""

from urllib.parse import parse_qs, quote, urlsplit

PROTOCOL_VERSION = 1

INGEST_PATH = "/ingest/scrapy"

# One response or failed download, in this order (times epoch ms, durations seconds).
RESPONSE_FIELDS = (
    "t",
    "startedAt",
    "waitMs",
    "slot",
    "url",
    "method",
    "status",
    "latency",
    "downloadTime",
    "bytes",
    "inFlight",
    "delayBefore",
    "delayAfter",
    "delayCause",
    "depth",
    "contentType",
    "attempt",
    "errorKind",
    "errorMessage",
    "debug",
)

# One downloader slot as it stands (sent when it changed).
SLOT_FIELDS = (
    "key",
    "transferring",
    "queued",
    "active",
    "delay",
    "concurrency",
    "randomize",
    "paused",
    "pinDelay",
    "pinConcurrency",
    "nextStartAt",
)


class Endpoint:
    """Where batches go: host, port and the token of a Slotscope URL."""

    def __init__(self, host, port, token, shown):
        self.host = host
        self.port = port
        self.token = token
        # The URL without its token, for log lines.
        self.shown = shown

    @property
    def path(self):
        return INGEST_PATH + "?token=" + quote(self.token, safe="")


def parse_slotscope_url(url):
    """The Endpoint of the URL `slotscope serve` prints; ValueError in words when it is not one."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("SLOTSCOPE_URL is empty: set it to the URL `slotscope serve` prints")
    parts = urlsplit(url.strip())
    if parts.scheme != "http":
        raise ValueError(
            "SLOTSCOPE_URL %r is not an http:// URL (the one `slotscope serve` prints)" % _hide_token(url)
        )
    if not parts.hostname:
        raise ValueError("SLOTSCOPE_URL %r has no host" % _hide_token(url))
    try:
        port = parts.port or 80
    except ValueError:
        raise ValueError("SLOTSCOPE_URL %r has a bad port" % _hide_token(url)) from None
    token = (parse_qs(parts.query).get("token") or [""])[0]
    if not token:
        raise ValueError(
            "SLOTSCOPE_URL %r has no ?token=…: copy the whole URL `slotscope serve` prints" % _hide_token(url)
        )
    host = parts.hostname
    shown_host = "[%s]" % host if ":" in host else host
    return Endpoint(host, port, token, "http://%s:%d" % (shown_host, port))


def _hide_token(url):
    i = url.find("token=")
    return url if i < 0 else url[: i + 6] + "…"
