"""Every real fixture under registry/ through the engine, three ways.

1. ``parse_fixture`` (what codegen's link stage runs) gives the fixture's ``expected`` output or
   ``expected_error`` class;
2. a Mock call with that fixture forced gives the same;
3. for callable adapters, a Live call against a loopback server that answers with the fixture's
   bytes gives the same again — so the real manifests' request building (profiles, derived
   parameters, token exchange) runs end to end, not only their parsers.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import unquote

import pytest

from tests.dispatch.helpers import REPO, FixedClock, no_wait, run, step_answers
from tests.support.upstreams import Reply, UpstreamServer, sgis_token_json
from ummaya.codegen.loader import load_registry
from ummaya.codegen.profile_merge import resolve_manifest
from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch import Dispatcher, fixture_files, step_fixture_name
from ummaya.wire.fixture_reader import parse_fixture
from ummaya.wire.resolvers import resolve
from ummaya.runtime.dispatch.fixtures import fixture_content_type

_REG, _PROBLEMS = load_registry(REPO)
_LOADED = {
    lm.id: lm
    for lm in _REG.manifests
    if lm.manifest.upstream is None or lm.manifest.upstream.profile in (None, *_REG.profiles)
}
_RESOLVED = {i: resolve_manifest(lm.manifest, _REG.profiles) for i, lm in _LOADED.items()}
CASES = [
    pytest.param(adapter_id, f.name, id=f"{adapter_id}/{f.name}")
    for adapter_id, m in sorted(_RESOLVED.items())
    for f in m.fixtures
]
# Fixtures are written for "now"; freezing the clock keeps derived dates out of the comparison.
CLOCK = FixedClock(dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.timezone.utc))


def _fixture(adapter_id: str, name: str):
    return next(f for f in _RESOLVED[adapter_id].fixtures if f.name == name)


def _body(adapter_id: str, name: str) -> bytes:
    f = _fixture(adapter_id, name)
    return (_LOADED[adapter_id].fixtures_dir / f.response).read_bytes() if f.response else b""


def _check(outcome, fixture, manifest=None) -> None:
    if fixture.expected is not None:
        assert outcome.error_message is None or outcome.status == "no_data", outcome.error_message
        expected = fixture.expected
        if outcome.moved_from is not None:  # Mock moved the recording to the clock's day
            from ummaya.wire.calendar import anchor_of, days_to_today, move, moving_fields

            top, row = moving_fields(manifest)
            days = days_to_today(anchor_of(fixture), CLOCK())
            expected = {k: move(v, top[k], days) if k in top else v for k, v in expected.items()}
            expected["items"] = [{k: move(v, row[k], days) if k in row else v for k, v in r.items()} for r in expected.get("items", [])]
        assert outcome.output == expected
        assert outcome.status in ("ok", "no_data")
    else:
        assert outcome.status == "error"
        assert outcome.error_class == fixture.expected_error, outcome.error_message


@pytest.fixture(scope="module")
def registry_catalog() -> Catalog:
    # The catalog the real build writes (what ships), never a copy made here: a fixture file the
    # build does not copy (a lookup's sibling body) makes the Mock calls below fail. The build is
    # the one the serving tests use too, made once per registry state (tests/support/generated.py).
    from tests.support.generated import cached_build

    return Catalog.load(cached_build())


def test_the_build_copies_exactly_the_files_fixture_files_names(registry_catalog):
    shipped = {p.relative_to(registry_catalog.root / "fixtures").as_posix() for p in (registry_catalog.root / "fixtures").rglob("*") if p.is_file()}
    named = {
        f"{adapter_id}/{name}"
        for adapter_id, lm in _LOADED.items()
        for fx in _RESOLVED[adapter_id].fixtures
        for name in fixture_files(_RESOLVED[adapter_id], fx, lm.fixtures_dir)
    }
    assert shipped == named
    # At least one adapter declares a lookup whose sibling body ships (TAGO: stop name → nodeId).
    assert any(name.endswith(".lookup.json") or ".lookup." in name for name in shipped)


def test_the_registry_loads_and_has_fixtures():
    assert not [p for p in _PROBLEMS if "fixture" in p.message.lower()]
    assert CASES, "no real fixtures found under registry/"


@pytest.mark.parametrize(("adapter_id", "fixture_name"), CASES)
def test_parse_fixture_matches_expected(adapter_id, fixture_name):
    fixture = _fixture(adapter_id, fixture_name)
    _check(parse_fixture(_RESOLVED[adapter_id], fixture, _body(adapter_id, fixture_name)), fixture)


@pytest.mark.parametrize(("adapter_id", "fixture_name"), CASES)
def test_mock_call_matches_expected(registry_catalog, adapter_id, fixture_name):
    m = _RESOLVED[adapter_id]
    if m.tier == "handoff":
        pytest.skip("handoff adapters answer with channel material, not fixtures")
    fixture = _fixture(adapter_id, fixture_name)
    d = Dispatcher(registry_catalog, env={}, clock=CLOCK, sleep=no_wait)
    out = run(d.call(adapter_id, dict(fixture.request), mode="mock", fixture=fixture_name))
    assert (out.tier, out.fixture) == ("mock", fixture_name)
    _check(out, fixture, m)
    files = fixture_files(m, fixture, _LOADED[adapter_id].fixtures_dir) if m.upstream else []
    for step in m.upstream.chain() if m.upstream else []:
        if any(f in fixture.request for f in step.when_missing or []):
            continue
        if step_fixture_name(fixture.response or "", step.id) not in files or out.status != "ok":
            continue
        # The step ran from its sibling body and its picks reached the main request.
        # A pick may feed a plain parameter or a cond[FIELD::OP] filter (odcloud 서비스ID).
        names = [up for up, inp in m.upstream.params.items() if inp in step.pick]
        names += [f"cond[{f.field}::{f.op}]" for f in m.upstream.filters
                  if any(i in step.pick for i in ([f.input] if isinstance(f.input, str) else f.input or []))]
        url = unquote(out.upstream_url or "")
        assert names and all(f"{n}=" in url for n in names), out.upstream_url


@pytest.mark.parametrize(("adapter_id", "fixture_name"), CASES)
def test_live_call_against_a_loopback_upstream_matches_expected(
    registry_catalog, adapter_id, fixture_name
):
    m = _RESOLVED[adapter_id]
    if m.tier != "live" or m.upstream is None or not m.upstream.callable:
        pytest.skip("not a live adapter")
    fixture = _fixture(adapter_id, fixture_name)
    if fixture.response is None:
        pytest.skip("fixture has no upstream body")
    up = m.upstream
    defaults = {k: v["default"] for k, v in m.input_schema.get("properties", {}).items() if "default" in v}
    path = up.for_arguments({**defaults, **fixture.request}).path  # the operation the request chooses
    with UpstreamServer() as srv:
        srv.route(
            path,
            Reply(fixture.status, _body(adapter_id, fixture_name), fixture_content_type(fixture)),
        )
        overrides = {adapter_id: srv.url}
        by_path: dict[str, list] = {}
        for step in up.chain():  # each step answers from its sibling body, as in Mock
            response = _LOADED[adapter_id].fixtures_dir / fixture.response
            side = response.with_name(f"{response.stem}.{step.id}{response.suffix}")
            if side.is_file():
                by_path.setdefault(step.path, []).append((step, side.read_bytes()))
            if step.profile is not None:
                overrides[f"{adapter_id}.{step.id}"] = srv.url
        for step_path, answers in by_path.items():  # not ``path``: the main call is read below
            srv.route(step_path, step_answers(fixture.request, answers, fixture_content_type(fixture)))
        if up.auth and up.auth.style == "token_exchange":
            srv.route(up.auth.token_path, Reply(body=sgis_token_json("loopback-token")))
        env = {name: f"dummy-{name.lower()}" for name in m.credentials}
        d = Dispatcher(
            registry_catalog,
            env=env,
            base_url_overrides=overrides,
            clock=CLOCK,
            sleep=no_wait,
        )
        out = run(d.call(adapter_id, dict(fixture.request), mode="live"))
        sent = srv.seen(path)
    assert out.tier == "live" and out.moved_from is None  # Live is never moved to today
    _check(out, fixture)
    assert sent, "the live call never reached the loopback upstream"
    # Every declared parameter whose input was given went out under its upstream name.
    args = {**defaults, **fixture.request}
    for upstream_name, input_name in up.params.items():
        if args.get(input_name) is not None:
            assert sent[0].param(upstream_name) is not None, (
                f"{upstream_name} (from {input_name}) not sent"
            )
    for upstream_name, expr in up.derived_params.items():
        # A derived parameter goes out unless it derives nothing (law_jo without an article).
        if resolve(expr, args, CLOCK()):
            assert sent[0].param(upstream_name), f"derived {upstream_name} not sent"
        else:
            assert sent[0].param(upstream_name) is None, f"derived {upstream_name} sent empty"
    if up.auth and up.auth.style == "query":
        assert sent[0].param(up.auth.param) == env[up.auth.credential]
        assert up.auth.param not in (out.upstream_url or "")
    if up.auth and up.auth.style == "header":
        assert sent[0].headers[up.auth.param.lower()] == up.auth.prefix + env[up.auth.credential]
