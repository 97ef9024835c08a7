"""S01 release resolution (publish, list, promote; unknown alias or release → 404 release_not_found
in both modes, never a fallback) and S02 the retrieval policy each release records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.serve.conftest import client, parse_sse, variant
from ummaya.cli import main
from ummaya.runtime.serve.releases import RetrievalPolicy, make_bundle, publish
from ummaya.runtime.store import open_store


def run_cli(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_cli_publish_list_promote(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    env = {"UMMAYA_GENERATED": str(generated)}
    rid = json.loads((generated / "catalog.json").read_bytes())["release_id"]
    r = run_cli("release", "publish", "--db", sqlite_url, "--json", "--default-top-k", "3",
                "--allow-filter", "primitive", env=env)
    assert r.exit_code == 0, r.output
    pub = json.loads(r.output)
    assert pub["release_id"] == rid  # id = the lock hash the catalog carries
    assert pub["retrieval_policy"]["default_top_k"] == 3
    assert pub["retrieval_policy"]["allowed_filters"] == ["primitive"]
    # same build, same policy: a no-op; same id with other content: refused (immutable)
    assert run_cli("release", "publish", "--db", sqlite_url, "--default-top-k", "3",
                   "--allow-filter", "primitive", env=env).exit_code == 0
    r = run_cli("release", "publish", "--db", sqlite_url, "--default-top-k", "4", env=env)
    assert r.exit_code == 2 and "release_conflict" in r.output
    r = run_cli("release", "promote", "staging", "no-such-release", "--db", sqlite_url, "--json")
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "release_not_found"
    r = run_cli("release", "promote", "staging", rid, "--db", sqlite_url, "--json")
    out = json.loads(r.output)
    assert r.exit_code == 0 and {k: out[k] for k in ("alias", "release_id", "previous", "promoted", "forced")} \
        == {"alias": "staging", "release_id": rid, "previous": None, "promoted": True, "forced": False}
    assert out["report"]["allowed"] is True  # publish ran the suites; the gate found them holding
    listed = json.loads(run_cli("release", "list", "--db", sqlite_url, "--json").output)
    assert listed["aliases"] == {"staging": rid}
    assert [x["release_id"] for x in listed["releases"]] == [rid]


def test_bundle_is_deterministic_and_self_contained(generated: Path, tmp_path: Path) -> None:
    assert make_bundle(generated) == make_bundle(generated)
    copy = variant(generated, tmp_path / "g2", "r-copy")
    assert make_bundle(copy) != make_bundle(generated)  # the release id is inside catalog.json


def test_s01_alias_and_id_resolution_without_fallback(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    # two releases: A (everything) and B (locate adapters only)
    b_dir = variant(generated, tmp_path / "gb", "release-b", keep=lambda a: a["primitive"] == "locate")
    with open_store(sqlite_url) as store:
        a = publish(store, generated)
        b = publish(store, b_dir)
        store.promote("production", a.release_id)
        store.promote("canary", b.release_id)
    with client(generated, sqlite_url, tmp_path) as c:
        q = {"query": "동아대 승학캠퍼스 근처 약국 어디 있어?", "mode": "mock"}
        j = c.post("/v1/answer", json=q).json()
        assert j["release"] == {"id": a.release_id, "alias": "production"}
        assert "nmc_pharmacies" in [x["adapter_id"] for x in j["calls"]]
        j = c.post("/v1/answer", json={**q, "release_alias": "canary"}).json()
        assert j["release"] == {"id": "release-b", "alias": "canary"}
        assert all(x["primitive"] == "locate" for x in j["calls"])  # B has no find adapters
        j = c.post("/v1/answer", json={**q, "release_alias": "release-b"}).json()  # by id
        assert j["release"] == {"id": "release-b", "alias": None}
        # retrieve, too, answers from the named release only
        r = c.post("/v1/retrieve", json={"query": "약국", "release_alias": "canary"}).json()
        assert all(x["metadata"]["primitive"] == "locate" for x in r["candidates"])
        # unknown alias / release: 404 in both modes, the same code; nothing answered
        for name in ("nope", "0" * 64):
            r = c.post("/v1/answer", json={**q, "release_alias": name})
            assert r.status_code == 404 and r.json()["error"]["code"] == "release_not_found"
            r = c.post("/v1/answer", json={**q, "release_alias": name, "stream": True})
            assert r.status_code == 404
            ev = parse_sse(r.text)
            assert [e["event"] for e in ev] == ["metadata", "error"]
            assert ev[1]["data"]["error"]["code"] == "release_not_found"
            assert ev[1]["data"]["error"]["trace_id"] == ev[0]["data"]["trace_id"]
            r = c.post("/v1/retrieve", json={"query": "약국", "release_alias": name})
            assert r.status_code == 404 and r.json()["error"]["code"] == "release_not_found"
        # promotion takes effect on the next request (aliases are resolved per request)
        with open_store(sqlite_url) as store:
            store.promote("production", "release-b")
        j = c.post("/v1/answer", json=q).json()
        assert j["release"] == {"id": "release-b", "alias": "production"}


def test_release_stays_servable_after_the_build_changes(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    build = variant(generated, tmp_path / "build", "release-x")
    with open_store(sqlite_url) as store:
        publish(store, build)
        store.promote("production", "release-x")
    shutil.rmtree(build)  # the registry / generated folder moved on; the release did not
    with client(tmp_path / "gone", sqlite_url, tmp_path) as c:
        j = c.post("/v1/answer", json={"query": "부산시청 위치 알려줘", "mode": "mock"}).json()
        assert j["release"]["id"] == "release-x" and j["stop_reason"] == "completed"


def test_s02_retrieval_policy_is_recorded_and_applied(generated: Path, sqlite_url: str, tmp_path: Path) -> None:
    strict = RetrievalPolicy(default_top_k=2, allowed_filters=["primitive"])
    d = variant(generated, tmp_path / "gs", "release-strict")
    with open_store(sqlite_url) as store:
        rel = publish(store, d, strict)
        store.promote("production", rel.release_id)
        publish(store, generated)  # a second release with the default policy
        store.promote("open", json.loads((generated / "catalog.json").read_bytes())["release_id"])
    with client(generated, sqlite_url, tmp_path) as c:
        listed = {r["release_id"]: r for r in c.get("/v1/releases").json()["releases"]}
        assert listed["release-strict"]["retrieval_policy"]["allowed_filters"] == ["primitive"]
        q = "근처 응급실 약국 병원 어디 있어?"
        r = c.post("/v1/retrieve", json={"query": q}).json()
        assert len(r["candidates"]) == 2 and r["policy"]["default_top_k"] == 2  # default top_k applied
        assert len(c.post("/v1/retrieve", json={"query": q, "release_alias": "open"}).json()["candidates"]) > 2
        r = c.post("/v1/retrieve", json={"query": q, "filters": {"tier": "live"}})
        assert r.status_code == 422 and r.json()["error"]["code"] == "unknown_filter"  # not allowed here
        r = c.post("/v1/retrieve", json={"query": q, "filters": {"tier": "live"}, "release_alias": "open"})
        assert r.status_code == 200  # the other release allows it
        r = c.post("/v1/retrieve", json={"query": q, "filters": {"nonsense": "x"}, "release_alias": "open"})
        assert r.status_code == 422 and r.json()["error"]["code"] == "unknown_filter"
        r = c.post("/v1/answer", json={"query": q, "filters": {"tier": "live"}, "stream": True})
        assert r.status_code == 422 and parse_sse(r.text)[-1]["data"]["error"]["code"] == "unknown_filter"
        r = c.post("/v1/retrieve", json={"query": q, "filters": {"primitive": "locate"}, "top_k": 5}).json()
        assert r["candidates"] and all(x["metadata"]["primitive"] == "locate" for x in r["candidates"])


def test_cli_serve_publishes_the_first_release_and_serves(generated: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import httpx

    from tests.serve.conftest import REPO
    from tests.support.serving import listening_socket, spawn_on, wait_ready

    sock = listening_socket()  # bound before the start: readiness is one request (serving.py)
    port = sock.getsockname()[1]
    db = f"sqlite:///{tmp_path / 'cli-serve.sqlite3'}"
    env = {**os.environ, "UMMAYA_GENERATED": str(generated), "UMMAYA_HOME": str(tmp_path / "home")}
    log = open(tmp_path / "serve.log", "wb")
    proc = spawn_on(sock, [sys.executable, "-c", "from ummaya.cli import main; main()", "serve", "--fd", str(sock.fileno()),
                           "--db", db, "--log-level", "warning"], env=env, cwd=str(REPO), stdout=log, stderr=subprocess.STDOUT)
    try:
        ready = wait_ready(f"http://127.0.0.1:{port}", proc, lambda: (tmp_path / "serve.log").read_text(), timeout=60)
        rid = json.loads((generated / "catalog.json").read_bytes())["release_id"]
        assert ready.json()["release"] == {"id": rid, "alias": "production"}
        j = httpx.post(f"http://127.0.0.1:{port}/v1/answer", json={"query": "부산시청 위치 알려줘", "mode": "mock"},
                       timeout=30).json()
        assert j["stop_reason"] == "completed" and j["release"]["id"] == rid
    finally:
        proc.terminate()
        proc.wait(15)
