"""Red-team body variants against the server (each was accepted before): an object naming a key
twice (a proxy or a log reads one value, the turn would act on the other) and the JavaScript
constants NaN / Infinity, which are not JSON. Both are refused before any turn, with a stable
code, and the refusal is traced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.conftest import (  # noqa: F401  (fixtures)
    _isolated_home,
    _release_cache,
    client,
    generated,
)
from tests.store.conftest import pg_base_url, pg_url  # noqa: F401

JSON = {"content-type": "application/json"}


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'body.sqlite3'}"
    return request.getfixturevalue("pg_url")


@pytest.mark.parametrize("path", ["/v1/answer", "/v1/retrieve"])
def test_duplicate_keys_and_non_json_constants_are_refused(generated, url, tmp_path, path) -> None:  # noqa: F811
    with client(generated, url, tmp_path) as c:
        cases = [
            (b'{"query": "\xec\x95\xbd\xea\xb5\xad", "query": "x"}', 400, "duplicate_key"),
            (b'{"query": "a", "filters": {"primitive": "lookup", "primitive": "send"}}', 400, "duplicate_key"),
            (b'{"query": "a", "top_k": NaN}', 400, "invalid_json"),
            (b'{"query": "a", "top_k": Infinity}', 400, "invalid_json"),
            (b'{"query": "a", "top_k": -Infinity}', 400, "invalid_json"),
        ]
        for body, status, code in cases:
            r = c.post(path, content=body, headers=JSON)
            assert r.status_code == status, (body, r.status_code, r.text[:200])
            err = r.json()["error"]
            assert err["code"] == code and err["trace_id"], (body, err)
        # 1e999 is JSON (a float overflowing to inf): a field that needs an integer refuses it.
        r = c.post(path, content=b'{"query": "a", "top_k": 1e999}', headers=JSON)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
        r = c.post(path, json={"query": "약국", **({"mode": "mock"} if path == "/v1/answer" else {})})
        assert r.status_code == 200, r.text[:300]
