"""A recorded body read through the adapter's own reader and projection, with no request: what the
build's link stage checks every fixture with (``parse_fixture`` against ``expected`` /
``expected_error``) and what Mock answers with. It lives below the runtime and the build so both
run the very same code; ``with_defaults`` fills an adapter's declared argument defaults, the one
argument step a recording needs (the dispatcher and Mock use it too).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from typing import Any

from ummaya.model.manifest import Fixture, Manifest

from .calendar import anchor_of
from .envelopes import read_response
from .errors import ADAPTER_ERROR, UpstreamError
from .outcome import CallOutcome, CallStatus, error_outcome, handoff_outcome, ms
from .output import build_output, validate_output
from .resolvers import issue_params


def with_defaults(input_schema: dict[str, Any], args: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(args)
    for name, prop in (input_schema.get("properties") or {}).items():
        if name not in out and isinstance(prop, dict) and "default" in prop:
            out[name] = copy.deepcopy(prop["default"])
    return out


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
    status: CallStatus = "no_data" if isinstance(items, list) and not items else "ok"
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
    status: CallStatus = "no_data" if parsed.status == "no_data" or not output.get("items") else "ok"
    return CallOutcome(
        adapter_id=manifest.id,
        tier="mock",
        status=status,
        output=output,
        latency_ms=ms(t0),
        fixture=fixture.name,
        attempts=1,
    )
