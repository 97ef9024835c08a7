"""Property: whatever a live service does to one of its own bodies, the Live path answers with a
known outcome — ok, no_data, or an error of a known class with a code — never an escaped exception
(the dispatcher's INTERNAL catch-all), never output that breaks the adapter's output schema.

Every adapter of the registry takes part (Mock-tier ones are run through the same Live engine with
their upstream marked callable), each with its own fixture bodies mutated the way real answers go
wrong: fields dropped, values of the wrong type, huge or non-finite numbers, items duplicated,
Unicode oddities (zero-width, bidi controls, NFD jamo, NUL), bodies cut off mid-stream. Bounded to
a few seconds in the normal suite; an in-process transport stands in for the socket (the loopback
server tests in test_real_shapes.py cover the wire itself).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from typing import Any
from xml.etree import ElementTree as ET

import httpx
import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dispatch.helpers import REPO, no_wait
from tests.dispatch.test_wire_truth import ENV, NOON, REAL
from tests.support.upstreams import sgis_token_json
from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch import Dispatcher

KNOWN_CLASSES = {"adapter_error", "credential_missing", "channel_unavailable"}
BASE = "http://upstream.test"


def _live_copy(adapter_id: str):
    m = REAL[adapter_id]
    if m.tier == "live":
        return m
    m = m.model_copy(deep=True)
    m.tier = "live"
    m.upstream.callable = True
    return m


def _bodies(adapter_id: str) -> list[tuple[dict, str, bytes]]:
    out = []
    for f in REAL[adapter_id].fixtures:
        if not f.response:
            continue
        path = next(REPO.glob(f"registry/*/fixtures/{adapter_id}/{f.response}"), None)
        if path is not None:
            out.append((f.request, f.response, path.read_bytes()))
    return out


ADAPTERS = sorted(a for a, m in REAL.items() if m.upstream is not None and _bodies(a))
BODIES = {a: _bodies(a) for a in ADAPTERS}
# Tally of outcomes, for a long hunt's summary (see the module docstring); never asserted on.
OUTCOMES: dict[tuple[str, str | None], int] = {}

ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\u200b",
        "\u202e부산\u202c",
        "\ufeff",
        "\u1107\u116e\u1109\u1161\u11ab",  # 부산 as NFD jamo
        "\x00",
        "😀" * 3,
        "\u00a0\u00a0",
        "-",
        "null",
        "NaN",
        "1e400",
        "99999999999999999999999999999999",
    ]
)
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -0.0]),
    ODD_TEXT,
    st.builds(list),  # fresh objects: a later edit must not change what the strategy returns
    st.builds(dict),
    st.builds(lambda: [{"x": 1}]),
)


def _nodes(doc: Any, path=()) -> list[tuple]:
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nodes(v, (*path, i))
    return out


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def mutate_json(data, doc: Any) -> Any:
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        nodes = _nodes(doc)
        path = data.draw(st.sampled_from(nodes), label="path")
        op = data.draw(st.sampled_from(["drop", "wrong", "dup", "odd_str"]), label="op")
        if not path:
            if op == "wrong":
                doc = data.draw(WRONG)
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        if op == "drop":
            del parent[key]
        elif op == "wrong":
            parent[key] = data.draw(WRONG, label="value")
        elif op == "dup" and isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(parent[key])))
        elif op == "dup" and isinstance(parent[key], (dict, list)):
            parent[key] = [parent[key], json.loads(json.dumps(parent[key]))]
        elif isinstance(parent[key], str):
            parent[key] = parent[key] + data.draw(ODD_TEXT, label="odd")
    return doc


def mutate_xml(data, root: ET.Element) -> ET.Element:
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        pairs = [(p, c) for p in root.iter() for c in list(p)]
        if not pairs:
            break
        parent, child = data.draw(st.sampled_from(pairs), label="element")
        op = data.draw(st.sampled_from(["drop", "text", "dup", "empty"]), label="op")
        if op == "drop":
            parent.remove(child)
        elif op == "dup":
            parent.insert(list(parent).index(child), ET.fromstring(ET.tostring(child)))
        elif op == "empty":
            for c in list(child):
                child.remove(c)
            child.text = None
        else:
            value = data.draw(st.one_of(ODD_TEXT, st.integers(-(10**30), 10**30).map(str)))
            child.text = value.replace("\x00", "")  # XML 1.0 cannot carry NUL at all
    return root


def mutated_body(data, name: str, body: bytes) -> bytes:
    if data.draw(st.booleans(), label="structural"):
        if name.endswith(".json"):
            doc = mutate_json(data, json.loads(body.decode("utf-8-sig")))
            out = json.dumps(doc, ensure_ascii=data.draw(st.booleans())).encode()
        else:
            out = ET.tostring(mutate_xml(data, ET.fromstring(body)), encoding="utf-8")
    else:
        out = body
    if data.draw(st.integers(0, 4), label="truncate?") == 0:
        out = out[: data.draw(st.integers(0, max(0, len(out) - 1)), label="cut")]
    return out


def _dispatcher(adapter_id: str, holder: dict) -> Dispatcher:
    def handle(req: httpx.Request) -> httpx.Response:
        auth = REAL[adapter_id].upstream.auth
        if auth is not None and auth.token_path and req.url.path == auth.token_path:
            return httpx.Response(200, content=sgis_token_json("tok"))
        lookup = REAL[adapter_id].upstream.lookup
        if lookup is not None and req.url.path == lookup.path and holder.get("lookup"):
            return httpx.Response(200, content=holder["lookup"])
        return httpx.Response(200, content=holder["body"], headers={"content-type": holder["ctype"]})

    cat = Catalog(root=REPO / "generated", release_id="t", adapters={adapter_id: _live_copy(adapter_id)})
    return Dispatcher(
        cat,
        env=ENV,
        base_url_overrides={adapter_id: BASE},
        clock=NOON,
        sleep=no_wait,
        transport=httpx.MockTransport(handle),
        max_attempts=2,
    )


@settings(
    # a few seconds in the normal suite; UMMAYA_FUZZ_EXAMPLES=5000 for a long hunt
    max_examples=int(os.environ.get("UMMAYA_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)
@given(data=st.data())
def test_a_mutated_own_body_is_always_a_known_outcome(data):
    adapter_id = data.draw(st.sampled_from(ADAPTERS), label="adapter")
    request, name, body = data.draw(st.sampled_from(BODIES[adapter_id]), label="fixture")
    holder: dict = {
        "body": mutated_body(data, name, body),
        "ctype": "application/json" if name.endswith(".json") else "text/xml",
    }
    stem, _, suffix = name.rpartition(".")
    side = next(REPO.glob(f"registry/*/fixtures/{adapter_id}/{stem}.lookup.{suffix}"), None)
    if side is not None:
        holder["lookup"] = side.read_bytes()
    m = REAL[adapter_id]
    out = asyncio.run(_dispatcher(adapter_id, holder).call(adapter_id, request, mode="live"))
    key = (out.status, out.error_code if out.status == "error" else None)
    OUTCOMES[key] = OUTCOMES.get(key, 0) + 1
    assert out.tier == "live"
    assert out.status in ("ok", "no_data", "error"), out
    if out.status == "error":
        assert out.error_class in KNOWN_CLASSES, out
        assert out.error_code and out.error_code != "INTERNAL", (out.error_code, out.error_message)
        assert out.error_message
    else:
        assert out.output is not None
        jsonschema.validate(out.output, m.output_schema)
