"""The OpenAPI document: committed at the repository root (openapi.json), drift-checked like
generated/, served at /openapi.json; and schemathesis against the live app finds 0 failures."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.serve.conftest import REPO
from ummaya.runtime.serve import ServeSettings, create_app, openapi_bytes

COMMITTED = REPO / "openapi.json"
REGENERATE = "python -m ummaya.runtime.serve openapi > openapi.json"


def test_committed_openapi_has_not_drifted() -> None:
    fresh = openapi_bytes(create_app(ServeSettings(auto_publish=False)))
    assert COMMITTED.read_bytes() == fresh, f"openapi.json is stale: run `{REGENERATE}`"


def test_served_document_is_the_committed_one(api: Any) -> None:
    r = api.get("/openapi.json")
    assert r.status_code == 200 and r.content == COMMITTED.read_bytes()
    doc = r.json()
    assert set(doc["paths"]) == {"/healthz", "/readyz", "/v1/answer", "/v1/retrieve", "/v1/releases",
                                 "/v1/traces/{trace_id}"}
    assert doc["x-error-codes"]["release_not_found"]["status"] == 404


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_schemathesis_finds_no_failures(live_server: Any, tmp_path: Path) -> None:
    srv = live_server(f"sqlite:///{tmp_path / 'st.sqlite3'}", UMMAYA_SERVE_MODE="mock",
                      UMMAYA_LLM_BASE_URL=f"http://127.0.0.1:{_closed_port()}/v1")
    exe = shutil.which("schemathesis") or str(Path(sys.executable).parent / "schemathesis")
    proc = subprocess.run(
        [exe, "run", srv.url + "/openapi.json", "--checks", "all", "--max-examples", "30",
         "--seed", "7", "--request-timeout", "20", "--no-color"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert " passed" in out and "failed" not in out.split("SUMMARY")[-1].lower().replace("0 failed", "")
    assert httpx.get(srv.url + "/healthz", timeout=5).status_code == 200
