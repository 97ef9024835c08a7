"""One request, every surface: the CLI (`ummaya ask --json`), the serving API (JSON and SSE),
MCP's `ask` tool and the citizen page run the same turn on the same release, so they make the same
calls (adapter, tier, status), stop for the same reason, agree on grounding and speak the same
language.

The page is an SSE client of ``POST /v1/answer`` (runtime/serve/static/app.js), so its turns are
traced as ``http_sse``; what makes it a surface of its own is the request it sends — no mode, no
policy, on a server run in mock (``UMMAYA_SERVE_MODE=mock``, as the page is served in
tests/web) — and the stream's ``completed`` or ``error`` it ends on. It is checked here for every
case it can send (mock, no policy); tests/web drives the page itself in Chromium.

Each surface is a renderer of the one turn service (runtime/service.py); a surface that built its
own turn (another retriever, another language guess, another stop) would show up here as a
difference. The requests are the first turns of every scenario the project has
(registry/scenarios/*.yaml, with their mode, policy and up-front consents), run in process; one
case also goes through the installed ``ummaya`` command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from .conftest import client, parse_sse

REPO = Path(__file__).resolve().parents[2]
PARTS = 4  # the cases run in this many slices, so that parallel workers share them
KEYS = ("DATA_GO_KR_SERVICE_KEY", "KAKAO_REST_API_KEY", "JUSO_CONFM_KEY", "SGIS_CONSUMER_KEY", "SGIS_CONSUMER_SECRET")


@dataclass(frozen=True)
class Case:
    request: str
    mode: str
    policy: str | None
    consents: tuple[str, ...]


def first_turns() -> list[Case]:
    """Each scenario's first turn as a request, once per distinct request, in scenario order."""
    from ummaya.runtime.scenarios import load_scenarios

    seen: dict[Case, None] = {}
    for _path, sc in load_scenarios(REPO):
        turn = sc.all_turns()[0]
        consents = tuple(dict.fromkeys([*sc.consents, *turn.consents]))
        seen.setdefault(Case(turn.request, sc.mode, sc.policy, consents), None)
    return list(seen)


CASES = first_turns()
# All of them take ~95 s on two workers; the test runs a stated, deterministic half: every other
# first turn in scenario order, plus every one that carries consents, a policy or another mode.
SAMPLE = [c for i, c in enumerate(CASES) if i % 2 == 0 or c.consents or c.policy or c.mode != "mock"]


def _calls(calls: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(c["adapter_id"], c["tier"], c["status"]) for c in calls]


def _seen(j: dict[str, Any]) -> dict[str, Any]:
    return {"calls": _calls(j["calls"]), "stop_reason": j["stop_reason"], "grounded": j["grounded"],
            "language": j["language"]}


def _cli_args(case: Case, db: str) -> list[str]:
    args = ["ask", "--json", "--mode", case.mode, "--db", db]
    args += [a for c in case.consents for a in ("--consent", c)]
    if case.policy:
        args += ["--policy", case.policy]
    return [*args, case.request]


def _cli(root: Path, db: str, case: Case) -> dict[str, Any]:
    from ummaya.cli import main

    done = CliRunner().invoke(main, [*_cli_args(case, db), "--root", str(root)])
    assert done.exit_code == 0, done.output
    return _seen(json.loads(done.stdout))


def _body(case: Case, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"query": case.request, "mode": case.mode, "consents": list(case.consents), **extra}
    if case.policy:
        body["policy"] = case.policy
    return body


def _json(api: Any, case: Case) -> dict[str, Any]:
    r = api.post("/v1/answer", json=_body(case))
    if r.status_code != 200:  # an upstream stop is an API error, which carries no calls
        return {"stop_reason": r.json()["error"]["code"]}
    return _seen(r.json())


def _sse(api: Any, case: Case) -> dict[str, Any]:
    events = parse_sse(api.post("/v1/answer", json=_body(case, stream=True)).text)
    done = events[-1]["data"]
    if events[-1]["event"] == "error":
        return {"stop_reason": done["error"]["code"]}
    assert events[-1]["event"] == "completed", events[-1]
    # The stream's opening words and its end speak of the same request.
    assert events[0]["data"].get("language", done["language"]) == done["language"], (events[0], done)
    return _seen(done)


APP_JS = REPO / "runtime" / "serve" / "static" / "app.js"


def _page_can_send(case: Case) -> bool:
    """The page sends no mode and no policy: it asks a mock server, with the citizen's consents."""
    return case.mode == "mock" and case.policy is None


def _page(api: Any, case: Case) -> dict[str, Any]:
    """The request exactly as the page builds it (``ask`` in app.js), read as the page reads it:
    the stream's last ``completed`` or ``error`` event is the turn's end."""
    body: dict[str, Any] = {"query": case.request, "stream": True}
    if case.consents:
        body["consents"] = list(case.consents)
    r = api.post("/v1/answer", json=body, headers={"Accept": "text/event-stream"})
    events = parse_sse(r.text)
    # One trace schema for every surface: the page's turn is an SSE turn (runtime/serve/page.py).
    trace = api.get(f"/v1/traces/{events[0]['data']['trace_id']}").json()
    assert trace["meta"]["surface"] == "http_sse", trace["meta"]
    final = [e for e in events if e["event"] in ("completed", "error")][-1]
    if final["event"] == "error":
        return {"stop_reason": final["data"]["error"]["code"]}
    return _seen(final["data"])


def test_the_page_sends_the_request_this_test_sends() -> None:
    """If app.js changed how it asks, ``_page`` above would no longer be the page."""
    js = APP_JS.read_text(encoding="utf-8")
    assert "const body = { query, stream: true };" in js
    assert 'fetch("/v1/answer", { method: "POST", headers: { "Content-Type": "application/json", ' \
           'Accept: "text/event-stream" }, body: JSON.stringify(body) })' in js
    assert "body.mode" not in js and "body.policy" not in js
    assert any(_page_can_send(c) for c in SAMPLE) and any(_page_can_send(c) and c.consents for c in SAMPLE)


def _mcp(service: Any, case: Case, n: int) -> dict[str, Any]:
    """MCP's ``ask`` in a session of its own, its consents given up front as a host's consent
    dialog would have given them."""
    from ummaya.runtime.mcp import McpBackend, build_server

    session = f"mcp-surface-{n}"
    for adapter_id in case.consents:
        service.grant(session, service.catalog.adapters[adapter_id])
    backend = McpBackend(lambda: service, mode=case.mode, session_id=session)  # type: ignore[arg-type]

    async def go() -> Any:
        async with Client(build_server(backend)) as c:
            return await c.call_tool("ask", {"query": case.request, **({"policy": case.policy} if case.policy else {})})

    return _seen(anyio.run(go).structured_content)


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEYS:
        monkeypatch.delenv(var, raising=False)


def disagreement(seen: dict[str, dict[str, Any]]) -> bool:
    """Whether the surfaces ran different turns: every surface ranks with the same reranking
    retriever (runtime/retrieve/rerank.py), so the adapters, tiers and statuses of the calls, the
    stop reason, grounding and language must be identical everywhere. The API's error body names
    only the stop (an upstream stop carries no calls), so there only the stop is compared."""
    full = [v for v in seen.values() if "calls" in v]
    if any(v != full[0] for v in full):
        return True
    return any(v["stop_reason"] != full[0]["stop_reason"] for v in seen.values())


def test_the_scenarios_give_cases_of_every_kind() -> None:
    """The set is the project's scenarios, with what makes a first turn differ on a surface."""
    assert len(SAMPLE) >= 100
    assert any(c.consents for c in SAMPLE) and any(c.policy for c in SAMPLE)
    assert {c.mode for c in SAMPLE} >= {"mock", "live"}


@pytest.mark.parametrize("part", range(PARTS))
def test_every_first_turn_is_the_same_turn_on_every_surface(part: int, generated: Path, project: Path,
                                                           tmp_path: Path, no_keys: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from ummaya.runtime.service import TurnService
    from ummaya.runtime.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'local.sqlite3'}")
    local = TurnService.load(generated, store=store)
    # The CLI's own assembly is TurnService.load; loading the catalog once per case would make
    # this test a catalog-loading benchmark, so the in-process CLI gets the loaded service.
    monkeypatch.setattr(TurnService, "load", classmethod(lambda cls, *a, **k: local))
    differ: list[dict[str, Any]] = []
    try:
        with client(generated, f"sqlite:///{tmp_path / 'serve.sqlite3'}", tmp_path) as api, \
                client(generated, f"sqlite:///{tmp_path / 'page.sqlite3'}", tmp_path, mode_ceiling="mock") as page:
            for n, case in enumerate(SAMPLE[part::PARTS]):
                seen = {"cli": _cli(project, "sqlite:///unused", case), "json": _json(api, case),
                        "sse": _sse(api, case), "mcp": _mcp(local, case, n)}
                if _page_can_send(case):
                    seen["page"] = _page(page, case)
                if disagreement(seen):
                    differ.append({"case": case.__dict__ | {"consents": list(case.consents)}, **seen})
    finally:
        store.close()
    assert not differ, json.dumps(differ, ensure_ascii=False, indent=1)


def test_the_installed_command_is_the_same_turn_as_the_api(generated: Path, project: Path, tmp_path: Path,
                                                           no_keys: None, api: Any) -> None:
    """One case through ``ummaya ask --json`` in its own process: nothing in process hides a
    difference of start-up (environment, entry point, default store)."""
    import os

    case = next(c for c in CASES if c.consents)
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    command = Path(sys.executable).with_name("ummaya")
    done = subprocess.run([str(command), *_cli_args(case, f"sqlite:///{tmp_path / 'cli.sqlite3'}"),
                           "--root", str(project)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not disagreement({"cli": _seen(json.loads(done.stdout)), "json": _json(api, case)})
