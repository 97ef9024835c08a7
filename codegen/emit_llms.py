"""``llms/``: the registry as LLM-readable Markdown (llmstxt.org layout).

``llms.txt`` is the index an agent reads first: an H1, a blockquote summary, H2 sections of links
(one per primitive) and an ``## Optional`` section an agent may skip when its context is short.
``adapters/<id>.md`` is one page per adapter; ``llms-full.txt`` is the index followed by every page,
for agents that want everything in one fetch.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2

from .lazy_template import LazyTemplate
from .emit_lock import flatten_fields
from ummaya.model.manifest import Manifest
from .fixture_provenance import share_text

LLMS_DIR = "llms"
PRIMITIVES = (
    ("locate", "Locate", "turn a place, address or coordinates into a location other adapters need"),
    ("find", "Find", "look up public information near a place or about a subject; read-only"),
    ("check", "Check", "verify identity, eligibility or consent; protected by a consent gate"),
    ("send", "Send", "submit, report, pay or apply through an official channel; protected"),
)

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False
)
_ENV.filters["cell"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
_ENV.filters["js"] = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)

INDEX = _ENV.from_string("""\
# UMMAYA adapter registry

> UMMAYA answers Korean public-service requests (in Korean or English) by calling declared adapters over real public data instead of paraphrasing documents. This registry holds {{ total }} adapters; each link below is one adapter's page with its inputs, outputs, permission gate, citation and examples.

Every adapter is one of four primitives — {% for key, _, blurb in primitives %}`{{ key }}` ({{ blurb }}){{ ', ' if not loop.last else '' }}{% endfor %} — and one of three tiers: `live` (calls the real upstream), `mock` (shape-faithful results from fixtures, labelled Mock) or `handoff` (official channel material: where to go, what to bring). Protected gates (login, action, sign, send) need a recorded consent before a call. Adapter ids double as tool names.

{% for heading, items in sections %}
## {{ heading }}

{% for m in items %}
- [{{ m.id }}](adapters/{{ m.id }}.md): {{ m.title.en }} / {{ m.title.ko }} — {{ m.summary.en }} ({{ m.tier }}, {{ m.agency.code }})
{% endfor %}

{% endfor %}
## Optional

- [slots.md](slots.md): the slot types an input or output field may declare with x-slot (class, carried, personal, derived, reader, vocabulary)
- [llms-full.txt](llms-full.txt): this index followed by every adapter page and the slot types, in one file
- [manifest.schema.json](../generated/manifest.schema.json): JSON Schema (draft 2020-12) of an adapter manifest
- [catalog.json](../generated/catalog.json): every manifest with its upstream profile merged, as the runtime loads it
""")


PAGE = LazyTemplate(_ENV, """\
# {{ m.id }} — {{ m.title.en }} / {{ m.title.ko }}

> {{ m.summary.en }}
>
> {{ m.summary.ko }}

| | |
|---|---|
| primitive | `{{ m.primitive }}` |
| tier | `{{ m.tier }}` |
| agency | {{ m.agency.name_en|cell }} ({{ m.agency.name_ko|cell }}, {{ m.agency.code }}) |
| domain | `{{ m.domain }}` |
| version | {{ m.version }} |
| permission gate | `{{ m.permission.gate }}` |
{% if m.requires %}
| requires (filled by an earlier call) | {{ m.requires|join(', ') }} |
{% endif %}
{% if m.provides %}
| provides | {{ m.provides|join(', ') }} |
{% endif %}
{% if m.credentials %}
| credentials for live calls | {{ m.credentials|join(', ') }} |
{% endif %}

## When to use

Korean hints: {{ m.search_hints.ko|join(', ') }}

English hints: {{ m.search_hints.en|join(', ') }}

Examples:
{% for e in m.examples.ko %}
- {{ e }}
{% endfor %}
{% for e in m.examples.en %}
- {{ e }}
{% endfor %}
{% if m.negative_examples %}

Not this adapter:
{% for n in m.negative_examples %}
- {{ n.text }} → {% if n.belongs_to %}[{{ n.belongs_to }}]({{ n.belongs_to }}.md){% else %}no adapter{% endif %}

{% endfor %}
{% endif %}

## Input

| field | type | required | slot | description |
|---|---|---|---|---|
{% for f in inputs %}
| `{{ f.name }}` | {{ f.type|cell }} | {{ 'yes' if f.required else 'no' }} | {{ f.slot }} | {{ f.description|cell }} |
{% endfor %}

## Output

{% for f in outputs %}
- `{{ f }}`
{% endfor %}
{% if m.permission.consent %}

## Consent notice (개인정보 보호법 제15조·제22조)

- Purpose: {{ m.permission.consent.purpose.en }} / {{ m.permission.consent.purpose.ko }}
- Data items: {{ m.permission.consent.data_items|join(', ') }}
- Retention: {{ m.permission.consent.retention.en }} / {{ m.permission.consent.retention.ko }}
- Right to refuse: {{ m.permission.consent.refusal.en }} / {{ m.permission.consent.refusal.ko }}
{% endif %}
{% if m.handoff %}

## Official channel

[{{ m.handoff.channel.en }} / {{ m.handoff.channel.ko }}]({{ m.handoff.url }}){% if m.handoff.phone %} · ☎ {{ m.handoff.phone }}{% endif %}


{% for s in m.handoff.steps.ko %}
{{ loop.index }}. {{ s }}
{% endfor %}
{% if m.handoff.documents.ko %}

Documents to bring: {{ m.handoff.documents.ko|join(', ') }}{% if m.handoff.documents.en %} ({{ m.handoff.documents.en|join(', ') }}){% endif %}

{% endif %}
{% if m.handoff.deadline %}

Deadline: {{ m.handoff.deadline.ko }} / {{ m.handoff.deadline.en }}
{% endif %}
{% endif %}

## Source

[{{ m.citation.title }}]({{ m.citation.url }}), verified {{ m.citation.verified }}{% if m.citation.basis %}. Basis: {{ m.citation.basis }}{% endif %}

{% if m.fixtures %}

Fixtures: {% for f in m.fixtures %}`{{ f.name }}` {{ f.request|js }}{{ ' → ' + f.expected_error if f.expected_error else '' }}{{ ' (' + f.source + ')' if f.source else '' }}{{ '; ' if not loop.last else '' }}{% endfor %}

Fixture provenance: {{ provenance }} (recorded = taken from the live service; documented = written from the agency's guide; synthetic = made up in the real shape).

{% endif %}
""")


def _inputs(schema: dict[str, Any]) -> list[dict[str, Any]]:
    from .emit_clients import annotation

    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        desc = prop.get("description", "")
        if "default" in prop:
            desc = f"{desc} (default {json.dumps(prop['default'], ensure_ascii=False)})".strip()
        out.append({"name": name, "type": annotation(prop), "required": name in required, "slot": prop.get("x-slot", ""), "description": desc})
    return out


def render_page(m: Manifest) -> bytes:
    text = PAGE.render(
        m=m, inputs=_inputs(m.input_schema), outputs=flatten_fields(m.output_schema), provenance=share_text(m)
    )
    return _tidy(text).encode("utf-8")


def index_row(m: Manifest) -> dict[str, Any]:
    """What the index's line for one adapter reads (plain data: the build keeps it per adapter;
    the template reads a dict's keys as it reads a model's attributes)."""
    return {"id": m.id, "primitive": m.primitive, "tier": m.tier, "title": {"en": m.title.en, "ko": m.title.ko},
            "summary": {"en": m.summary.en}, "agency": {"code": m.agency.code}}


def _row_of(lm: Any) -> dict[str, Any]:
    return index_row(lm.manifest)


def render_index(manifests: list[Any]) -> str:
    """``manifests``: Manifest or :func:`index_row` dicts."""
    rows = [m if isinstance(m, dict) else index_row(m) for m in manifests]
    ordered = sorted(rows, key=lambda m: m["id"])
    sections = [(heading, [m for m in ordered if m["primitive"] == key]) for key, heading, _ in PRIMITIVES]
    sections = [s for s in sections if s[1]]
    return _tidy(INDEX.render(total=len(ordered), sections=sections, primitives=PRIMITIVES))


def _tidy(text: str) -> str:
    # Templates are easier to read with generous blank lines; Markdown wants at most one.
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


SLOTS = _ENV.from_string("""\
# Slot types

> What an `x-slot` on an adapter's input or output field means. Declared once in `registry/_slots/*.yaml`; the engine's shared readers fill input fields from a citizen's request with them, and output fields declaring one provide it to later calls and to the session.

Columns: **class** (what kind of value), **carried** (kept for the next turn), **personal** (personal data: never carried or stored, sent only to a consented protected adapter), **derived** (the citizen does not say it: an earlier adapter's output, the session or an official code table supplies it), **reader** and **vocabulary** (how a request is read for it), **question** (what the engine asks when a required field of it is missing; en in `generated/understand/slots.json`).

| slot | class | carried | personal | derived | reader | vocabulary | question | meaning |
|---|---|---|---|---|---|---|---|---|
{% for name, s in slots %}
| `{{ name }}` | {{ s.class_ }} | {{ 'yes' if s.carried else '' }} | {{ 'yes' if s.personal else '' }} | {{ 'yes' if s.derived else '' }} | {{ s.reader or '' }} | {{ s.vocabulary or '' }} | {{ (s.question.ko if s.question else ('as ' ~ s.asked_as if s.asked_as else ''))|cell }} | {{ s.description|cell }} |
{% endfor %}
""")


def render_slots(table) -> bytes:
    return _tidy(SLOTS.render(slots=sorted(table.slots.items()))).encode("utf-8")


def emit_llms(manifests: list[Any], table=None, page=None) -> dict[str, bytes]:
    """``manifests``: Manifest, or LoadedManifest (whose state keeps its index row); ``page``:
    renders one adapter's page from what ``manifests`` holds (default :func:`render_page` of a
    Manifest; the build passes one that caches it per manifest file)."""
    ordered = sorted(manifests, key=lambda m: m.id)
    page = page or render_page
    pages = {m.id: page(m) for m in ordered}
    index = render_index([m if isinstance(m, Manifest) else m.derived("llms_row", _row_of, m)
                          for m in ordered])
    slots = render_slots(table) if table is not None else b""
    # Joined as bytes (UTF-8 throughout): the pages are not decoded and encoded again.
    sep = "\n---\n\n".encode("utf-8")
    full = index.encode("utf-8") + b"".join(sep + pages[i] for i in pages)
    if slots:
        full += sep + slots
    out = {f"{LLMS_DIR}/llms.txt": index.encode("utf-8"), f"{LLMS_DIR}/llms-full.txt": full}
    if slots:
        out[f"{LLMS_DIR}/slots.md"] = slots
    out.update({f"{LLMS_DIR}/adapters/{i}.md": page for i, page in pages.items()})
    return out
