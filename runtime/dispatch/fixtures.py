"""Mock's side of the engine: choosing a fixture, serving its bytes, and ``parse_fixture``.

Mock differs from Live only by the transport: ``FixtureTransport`` answers with the fixture body,
status and content type (inferred from the file extension when the fixture does not say), so the
request building, envelope reading and projection are the very same code. A chain step is
answered from ``<fixture stem>.<step id><suffix>`` beside the body (``.lookup`` for the one-step
``lookup``), page N > 1 from ``<fixture stem>.page<N><suffix>``; ``fixture_files`` names every
file a fixture needs, for the build to copy. Error fixtures answer only when named.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from ummaya.model.fixture_files import (  # the file-name contract, shared with the build
    fixture_files as fixture_files,
    lookup_fixture_name as lookup_fixture_name,
    page_fixture_name as page_fixture_name,
    step_fixture_name as step_fixture_name,
)
from ummaya.model.manifest import Fixture, Manifest

from .calendar import anchor_of
from .envelopes import read_response
from .errors import ADAPTER_ERROR, UpstreamError
from .outcome import CallOutcome, error_outcome, handoff_outcome, ms
from .output import build_output, validate_output
from .request import with_defaults
from .resolvers import issue_params


def pick_fixture(manifest: Manifest, args: Mapping[str, Any], name: str | None) -> Fixture:
    if name is not None:
        for f in manifest.fixtures:
            if f.name == name:
                return f
        raise UpstreamError(ADAPTER_ERROR, "NO_FIXTURE", f"{manifest.id} has no fixture '{name}'")
    # Error fixtures answer only when asked for by name: a citizen whose arguments happen to equal
    # an error fixture's request must not get a recorded gateway failure in Mock mode.
    normal = [f for f in manifest.fixtures if f.expected is not None]
    for f in normal:
        if with_defaults(manifest.input_schema, f.request) == dict(args):
            return f
    # Otherwise the recording nearest to the place asked about (same region, else distance).
    from .fixture_place import nearest

    near = nearest(manifest, normal, args)
    if near is not None:
        return near
    for f in normal:
        return f
    raise UpstreamError(
        ADAPTER_ERROR, "NO_FIXTURE", f"{manifest.id} has no normal fixture to answer from"
    )


def fixture_content_type(fixture: Fixture) -> str:
    if fixture.content_type:
        return fixture.content_type
    suffix = Path(fixture.response or "").suffix.lower()
    if suffix == ".xml":
        return "text/xml;charset=UTF-8"
    if suffix in (".html", ".htm"):
        return "text/html;charset=UTF-8"
    return "application/json;charset=UTF-8"


class FixtureTransport(httpx.AsyncBaseTransport):
    """Answers every request with one fixture body; ``routes`` answer a chain step's request
    (``step:<id>``) or a later page (``page:<n>``) — told by the ``ummaya_route`` request
    extension the engine sets, which never leaves the process — or a URL path. Records the
    requests it saw so tests can compare Mock and Live."""

    def __init__(
        self, body: bytes, status: int, content_type: str, routes: dict[str, bytes] | None = None
    ):
        self.body, self.status, self.content_type = body, status, content_type
        self.routes = routes or {}
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        route = request.extensions.get("ummaya_route")
        key = route if route in self.routes else request.url.path
        body = self.routes.get(key, self.body)
        status = 200 if key in self.routes else self.status
        return httpx.Response(status, content=body, headers={"content-type": self.content_type})


def outcome_from_expected(manifest: Manifest, fx: Fixture, t0: float | None) -> CallOutcome:
    """A mock-tier fixture without an upstream body: its declared outcome is the mock's answer."""
    latency = ms(t0) if t0 is not None else 0.0
    if fx.expected_error is not None:
        return CallOutcome(
            adapter_id=manifest.id,
            tier="mock",
            status="error",
            error_class=fx.expected_error,
            error_code="FIXTURE",
            error_message=fx.description or f"fixture {fx.name}",
            latency_ms=latency,
            fixture=fx.name,
        )
    try:
        validate_output(fx.expected or {}, manifest.output_schema)
    except UpstreamError as exc:
        return error_outcome(manifest.id, "mock", exc, t0 or time.perf_counter(), fixture=fx.name)
    items = (fx.expected or {}).get("items")
    status = "no_data" if isinstance(items, list) and not items else "ok"
    return CallOutcome(
        adapter_id=manifest.id,
        tier="mock",
        status=status,
        output=copy.deepcopy(fx.expected),
        latency_ms=latency,
        fixture=fx.name,
    )


def parse_fixture(manifest: Manifest, fixture: Fixture, body: bytes) -> CallOutcome:
    """Run one fixture body through the adapter's own reader and projection (no request).

    codegen's link stage compares the result with ``fixture.expected`` / ``expected_error``.
    ``manifest`` must be profile-resolved (codegen.resolve.resolve_manifest).
    """
    t0 = time.perf_counter()
    if manifest.tier == "handoff" or manifest.upstream is None:
        return handoff_outcome(manifest, t0)
    if fixture.response is None and not body:
        return outcome_from_expected(manifest, fixture, t0)
    try:
        parsed = read_response(manifest.upstream.envelope, fixture.status, body)
        args = with_defaults(manifest.input_schema, fixture.request)
        # The issue time the recording answered (its own moment), for columns_to_rows.base.
        anchor = anchor_of(fixture)
        issue = manifest.upstream.issue_time
        sent = issue_params(issue, anchor) if issue is not None and anchor is not None else {}
        # The operation the fixture's request chooses (upstream.operations), with its field names.
        upstream = manifest.upstream.for_arguments(args)
        output = build_output(parsed, upstream, manifest.output_schema, args, sent=sent)
    except KeyError as exc:
        err = UpstreamError(ADAPTER_ERROR, "INVALID_ARGUMENTS", str(exc.args[0]))
        return error_outcome(manifest.id, "mock", err, t0, fixture=fixture.name)
    except UpstreamError as exc:
        return error_outcome(manifest.id, "mock", exc, t0, fixture=fixture.name)
    status = "no_data" if parsed.status == "no_data" or not output.get("items") else "ok"
    return CallOutcome(
        adapter_id=manifest.id,
        tier="mock",
        status=status,
        output=output,
        latency_ms=ms(t0),
        fixture=fixture.name,
        attempts=1,
    )
