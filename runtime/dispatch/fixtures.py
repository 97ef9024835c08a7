"""Mock's side of the engine: choosing a fixture and serving its bytes (reading one through the
adapter is ``ummaya.wire.fixture_reader.parse_fixture``, shared with the build).

Mock differs from Live only by the transport: ``FixtureTransport`` answers with the fixture body,
status and content type (inferred from the file extension when the fixture does not say), so the
request building, envelope reading and projection are the very same code. A chain step is
answered from ``<fixture stem>.<step id><suffix>`` beside the body (``.lookup`` for the one-step
``lookup``), page N > 1 from ``<fixture stem>.page<N><suffix>``; ``fixture_files`` names every
file a fixture needs, for the build to copy. Error fixtures answer only when named.
"""

from __future__ import annotations

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

from ummaya.wire.errors import ADAPTER_ERROR, UpstreamError
from ummaya.wire.fixture_reader import with_defaults


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
    # A recording's request may also name what its steps resolved (a law's or library's name, for
    # the $input fields of its expected output): the citizen never gives those, so they do not
    # count against the match.
    picks = {k for step in manifest.upstream.chain() for k in step.pick} if manifest.upstream else set()
    if picks:
        asked = dict(args)
        for f in normal:
            recorded = with_defaults(manifest.input_schema, f.request)
            if {k: v for k, v in recorded.items() if k not in picks or k in asked} == asked:
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
