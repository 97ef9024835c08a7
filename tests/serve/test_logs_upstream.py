"""httpx's INFO line per upstream request is off on a server at INFO (the trace has every call),
back at debug level or with UMMAYA_LOG_UPSTREAM=on."""

from __future__ import annotations

import logging

import pytest

from ummaya.runtime.serve.app import quiet_upstream_logs


@pytest.fixture(autouse=True)
def _levels():
    names = ("", "httpx", "httpcore", "uvicorn.error")
    before = {n: logging.getLogger(n).level for n in names}
    for n in names[1:]:
        logging.getLogger(n).setLevel(logging.NOTSET)
    logging.getLogger("uvicorn.error").setLevel(logging.INFO)
    yield
    for n, level in before.items():
        logging.getLogger(n).setLevel(level)


def test_httpx_info_lines_are_off_at_info() -> None:
    quiet_upstream_logs({})
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)


@pytest.mark.parametrize("how", ["env", "debug", "set"])
def test_httpx_info_lines_stay_when_asked(how: str) -> None:
    env = {"UMMAYA_LOG_UPSTREAM": "on"} if how == "env" else {}
    if how == "debug":
        logging.getLogger("uvicorn.error").setLevel(logging.DEBUG)
    if how == "set":
        logging.getLogger("httpx").setLevel(logging.INFO)
    logging.getLogger().setLevel(logging.INFO)
    quiet_upstream_logs(env)
    assert logging.getLogger("httpx").isEnabledFor(logging.INFO)
