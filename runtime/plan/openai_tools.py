"""Manifest → OpenAI ``tools`` entries.

Only the narrowed candidates become tools, each named by its adapter id (ids are valid OpenAI tool
names by construction, see ``ADAPTER_ID``) with the adapter's real input schema as ``parameters``.
The manifest's own extension keywords (``x-slot`` and any other ``x-*``) are planner-side metadata,
not JSON Schema; they are stripped so strict servers (and the model) see plain JSON Schema.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ummaya.model.manifest import Manifest

# Keywords whose value is a mapping of *names* to subschemas: the names are data (a property may be
# called anything, even "x-foo") and only the subschemas are walked.
_NAMED_SUBSCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
# Keywords whose value is a subschema or a list of subschemas.
_SUBSCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "prefixItems",
        "allOf",
        "anyOf",
        "oneOf",
    }
)
# Keywords whose value is instance data and must be copied untouched.
_DATA = frozenset({"enum", "const", "default", "examples", "required", "dependentRequired"})


def strip_extensions(schema: Any) -> Any:
    """A deep copy of ``schema`` without ``x-*`` keywords at any schema position."""
    if isinstance(schema, list):
        return [strip_extensions(s) for s in schema]
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(key, str) and key.startswith("x-"):
            continue
        if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
            out[key] = {name: strip_extensions(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA:
            out[key] = strip_extensions(value)
        elif key in _DATA:
            out[key] = copy.deepcopy(value)
        else:
            # Unknown or annotation keywords (type, description, minimum, …): copy; nested dicts
            # are not subschemas we know of, so leave them exactly as written.
            out[key] = copy.deepcopy(value)
    return out


def tool_description(m: Manifest, *, short: bool = False) -> str:
    """Bilingual title and summary, then the facts the model needs to choose well. ``short`` (a
    small context): the title and the facts only — the summary is what the budget gives up first."""
    facts = [f"primitive={m.primitive}", f"tier={m.tier}", f"agency={m.agency.code}"]
    if m.permission.gate != "read-only":
        facts.append(f"gate={m.permission.gate} (needs the citizen's consent)")
    if m.requires:
        facts.append("needs " + ", ".join(m.requires) + " from an earlier locate step")
    if short:
        return f"{m.title.ko} / {m.title.en} [{'; '.join(facts)}]"
    return (
        f"{m.title.ko} / {m.title.en}. {m.summary.ko} {m.summary.en} [{'; '.join(facts)}]"
    )


def tool_for(m: Manifest, *, short: bool = False, bare: bool = False) -> dict[str, Any]:
    """``short``: the description without the summary; ``bare`` (the smallest contexts): the
    parameters' own descriptions go too — names, types, bounds and enums stay."""
    params = strip_extensions(m.input_schema)
    if bare:
        params = _without_descriptions(params)
    return {
        "type": "function",
        "function": {
            "name": m.id,
            "description": tool_description(m, short=short or bare),
            "parameters": params,
        },
    }


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_descriptions(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
            out[key] = {name: _without_descriptions(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA:
            out[key] = _without_descriptions(value)
        else:
            out[key] = value
    return out


# The planner's own tool, offered beside the adapters: a model asks the citizen through it and says
# which tool the answer is for and what is missing, so the engine can hold the question open (the
# offline planner says the same in its ``ask`` action). Under ``tool_choice: required`` it is the
# only way to ask at all. Never an adapter id: adapters are what the registry names, and it names
# no ``ask_citizen`` (the planner drops an adapter that would shadow it).
ASK_TOOL = "ask_citizen"


def ask_tool(tool_names: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": ASK_TOOL,
            "description": "Ask the citizen one short question when an input is missing and no tool can supply it.",
            "parameters": {
                "type": "object",
                "additionalProperties": False,
                "required": ["question"],
                "properties": {
                    "question": {"type": "string"},
                    "tool": {"type": "string", "enum": tool_names, "description": "the tool the answer is for"},
                    "missing": {"type": "array", "items": {"type": "string"}},
                    "arguments": {"type": "object", "description": "its inputs already known"},
                },
            },
        },
    }


def select_candidates(
    candidates: list[Manifest], max_tools: int = 5, known_slots: Iterable[str] = ()
) -> list[Manifest]:
    """At most ``max_tools`` candidates, best first, duplicates dropped — without breaking a chain.

    The turn widens the retrieved candidates with ``locate`` adapters that provide what the top ones
    ``require``; those come last and a plain cut would drop them. So when a kept adapter requires a
    slot that neither the session (``known_slots``) nor another kept adapter provides, the first
    cut-off candidate that provides it replaces the lowest-ranked kept one nobody depends on.
    """
    uniq: list[Manifest] = []
    for m in candidates:
        if all(m.id != u.id for u in uniq):
            uniq.append(m)
    kept, rest = uniq[:max_tools], uniq[max_tools:]
    known = set(known_slots)
    for m in list(kept):
        if m not in kept:
            continue
        provided = known | {s for k in kept for s in k.provides}
        need = set(m.requires) - provided
        if not need:
            continue
        prov = next((r for r in rest if need & set(r.provides)), None)
        if prov is None:
            continue
        needed_by_others = {s for k in kept if k is not m for s in k.requires}
        victim = next(
            (v for v in reversed(kept) if v is not m and not (set(v.provides) & needed_by_others)),
            None,
        )
        if victim is None:
            continue
        kept.remove(victim)
        kept.append(prov)
        rest.remove(prov)
    return kept


def tools_for(
    candidates: list[Manifest], max_tools: int = 5, known_slots: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """OpenAI ``tools`` for ``select_candidates(...)``, in that order."""
    return [tool_for(m) for m in select_candidates(candidates, max_tools, known_slots)]


def drop_one(kept: list[Manifest], known_slots: Iterable[str] = ()) -> list[Manifest] | None:
    """``kept`` less one tool, for a prompt that does not fit: the lowest-ranked one that no other
    kept tool needs (a locate step stays while a tool that requires what it provides does,
    unless ``known_slots`` already hold it); never the best-ranked tool — what the request is
    about outlasts the steps towards it. None when only that one is left."""
    if len(kept) <= 1:
        return None
    known = set(known_slots)
    for victim in reversed(kept[1:]):
        rest = [k for k in kept if k is not victim]
        needed = {s for k in rest for s in k.requires} - known
        if set(victim.provides) & needed and not any(set(r.provides) & set(victim.provides) for r in rest):
            continue
        return rest
    return [kept[0], *kept[1:-1]]  # only needed steps are left: the chain gives way, not the end
