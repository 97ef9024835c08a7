"""One logging filter for every log line the process writes: no credentials, no personal data.

Every Live call used to print its upstream URL — ``serviceKey=`` included — to the server's stderr
(httpx logs each request at INFO and the server configures INFO), and the server log carried the
citizen's text with phone numbers and 주민등록번호. ``ScrubFilter`` fixes the line itself, wherever
it comes from:

- credentials are removed: query or form parameters and JSON/dict keys named like a key or token
  (``serviceKey``, ``ServiceKey``, ``confmKey``, ``consumer_key``, ``consumer_secret``,
  ``accessToken``/``access_token``, ``apiKey``, ``token``, ``password`` …), ``Authorization``
  header values, ``KakaoAK …``/``Bearer …`` tokens, and — whatever the format — the literal value
  (plain and URL-encoded) of every credential the process holds in its environment;
- personal data is redacted with the same detector traces use (``redact``; URL escapes decoded);
- uvicorn's access lines lose their query strings (a path is enough to operate a server);
- tracebacks and stack traces are scrubbed as well (an httpx error names the URL it failed on).

``install()`` puts the filter on every record the process creates (a log-record factory, so
loggers configured later — uvicorn's, httpx's, the project's — are covered too) and on the
handlers of the root and uvicorn loggers; ``uvicorn_log_config()`` is uvicorn's own logging
configuration with the filter on both of its handlers. Both are idempotent.
"""

from __future__ import annotations

import copy
import logging
from typing import Any


MASK = "***"


def scrub(text: str) -> str:
    """``text`` without credentials and with personal data redacted."""
    if not text:
        return text
    # Imported on the first log line, not with the module: every CLI command installs the filter,
    # and most never log (the store package costs ~50 ms to import).
    from ummaya.wire.credentials import _KEYED, strip_credentials
    from ummaya.wire.redact import redact

    text = _KEYED.sub(lambda m: m.group(1) + MASK, strip_credentials(text))
    return redact(text)


def _path_only(value: Any) -> Any:
    return value.split("?", 1)[0] if isinstance(value, str) else value


class ScrubFilter(logging.Filter):
    """Rewrites a record in place (message, access-line path, traceback); never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_ummaya_scrubbed", False):
            return True
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            # uvicorn's AccessFormatter unpacks (client, method, path, http version, status).
            client, method, path, version, status = args
            record.args = (client, method, scrub(str(_path_only(path))), version, status)
        else:
            try:
                message = record.getMessage()
            except Exception:  # a broken format string: logging would print msg and args raw
                message = f"{record.msg} {record.args!r}"
            record.msg, record.args = scrub(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        record._ummaya_scrubbed = True
        return True


_FILTER = ScrubFilter()
_LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx", "httpcore", "ummaya", "mcp")


def install() -> None:
    """Scrub every record this process creates from now on, and every record the root and uvicorn
    handlers emit (records made before the factory was set included)."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "_ummaya_scrub", False):
        def scrubbing_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = factory(*args, **kwargs)
            _FILTER.filter(record)
            return record

        scrubbing_factory._ummaya_scrub = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(scrubbing_factory)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration with the filter on its handlers."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["ummaya_scrub"] = {"()": "ummaya.runtime.log_filter.ScrubFilter"}
    for handler in config.get("handlers", {}).values():
        handler.setdefault("filters", []).append("ummaya_scrub")
    return config


__all__ = ["MASK", "ScrubFilter", "install", "scrub", "uvicorn_log_config"]
