"""Tool calls a model wrote as text, for servers that do not parse them.

Without a server-side tool parser (llama-cpp-python with a GGUF's own template, vLLM without the
right ``--tool-call-parser``, many fine-tunes) a model writes its call into ``content``. The shapes
seen in the wild, each read here (``<tool_call>`` tags are taken out earlier, by
``stream.ContentFilter``, because they must never reach the citizen even mid-stream):

- ``fence``: a ```` ```json ```` (or bare ```` ``` ````) block holding a call object or a list of
  them — what Qwen2.5-Coder 1.5B wrote for every call in the recorded transcripts;
- ``bare``: the whole reply is a call object (or a list, or several one per line) — Llama 3.x,
  Qwen2.5-Coder 0.5B;
- ``mistral``: ``[TOOL_CALLS] [{…}]`` (v3 templates) or ``[TOOL_CALLS]name[ARGS]{…}`` (v11+);
- ``function_tag``: ``<function=name>{…}</function>`` (Llama 3.1's custom format) or the XML form
  ``<function=name><parameter=key>value</parameter></function>`` (Qwen3-Coder).

A call object is ``{"name": …, "arguments"|"parameters": …}`` or ``{"function": {…}}``; a name
must look like a tool name (``^[A-Za-z0-9_-]{1,64}$``), so an answer that happens to be JSON about
a hospital is not a call. A name that was not offered is still returned: the engine refuses it
and asks for a repair, it is never dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .protocol import ToolCall
from .stream import _call_from_object, _decode_arguments, new_call_id

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_MISTRAL = "[TOOL_CALLS]"
_MISTRAL_V11 = re.compile(r"([A-Za-z0-9_-]{1,64})(?:\[CALL_ID\][A-Za-z0-9]+)?\[ARGS\]")
_FUNCTION_TAG = re.compile(r"<function=([A-Za-z0-9_-]{1,64})>(.*?)(?:</function>|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\s]{1,64})>\s*(.*?)\s*(?:</parameter>|(?=<parameter=)|\Z)", re.S)
_DECODER = json.JSONDecoder()


def read_text_calls(text: str, formats: Iterable[str]) -> tuple[list[ToolCall], str]:
    """The calls written in ``text`` in one of ``formats`` and the text left around them."""
    formats = set(formats)
    if not text or not text.strip():
        return [], text
    if "mistral" in formats and _MISTRAL in text:
        calls, rest = _mistral(text)
        if calls:
            return calls, rest
    if "function_tag" in formats and "<function=" in text:
        calls, rest = _function_tags(text)
        if calls:
            return calls, rest
    if "fence" in formats and "```" in text:
        calls, rest = _fences(text)
        if calls:
            return calls, rest
    if "bare" in formats:
        calls = _bare(text)
        if calls:
            return calls, ""
    return [], text


def _as_calls(obj: Any) -> list[ToolCall] | None:
    """A call object or a list of them → calls; anything else → None."""
    objs = obj if isinstance(obj, list) else [obj]
    if not objs:
        return None
    out: list[ToolCall] = []
    for o in objs:
        if not isinstance(o, dict):
            return None
        if isinstance(o.get("function"), dict) and "name" not in o:
            o = o["function"]
        name = o.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return None
        if not ({"arguments", "parameters"} & set(o)) and set(o) - {"name", "type", "id"}:
            return None  # {"name": …, "phone": …} is data about something, not a call
        out.append(_call_from_object({"name": name, "arguments": o.get("arguments", o.get("parameters", {}))}))
    return out


def _json_values(text: str) -> list[Any] | None:
    """Every JSON value in ``text``, one after another (whitespace between), or None."""
    values, i, text = [], 0, text.strip()
    while i < len(text):
        try:
            val, end = _DECODER.raw_decode(text, i)
        except ValueError:
            return None
        values.append(val)
        i = end
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
    return values or None


def _bare(text: str) -> list[ToolCall]:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return []
    values = _json_values(stripped)
    if values is None:
        return []
    calls: list[ToolCall] = []
    for v in values:
        got = _as_calls(v)
        if got is None:
            return []
        calls += got
    return calls


def _fences(text: str) -> tuple[list[ToolCall], str]:
    calls: list[ToolCall] = []
    rest: list[str] = []
    last = 0
    for m in _FENCE.finditer(text):
        lang, body = m.group(1).lower(), m.group(2)
        if lang not in ("", "json", "tool_call", "tool_code", "javascript"):
            continue
        got = _bare(body)
        if not got:
            continue
        calls += got
        rest.append(text[last:m.start()])
        last = m.end()
    if not calls:
        return [], text
    rest.append(text[last:])
    return calls, "".join(rest).strip()


def _mistral(text: str) -> tuple[list[ToolCall], str]:
    head, _, tail = text.partition(_MISTRAL)
    tail = tail.strip()
    if tail.startswith(("[", "{")):  # v3: a JSON list of call objects
        values = _json_values(tail)
        listed = _as_calls(values[0]) if values and len(values) == 1 else None
        return (listed, head.strip()) if listed else ([], text)
    calls: list[ToolCall] = []
    pos = 0
    while True:  # v11: name[ARGS]{…}, possibly several, each after its own [TOOL_CALLS] or not
        m = _MISTRAL_V11.match(tail, pos)
        if m is None:
            break
        try:
            args, end = _DECODER.raw_decode(tail, m.end())
        except ValueError:
            calls.append(ToolCall(new_call_id(), m.group(1), None, tail[m.end():]))
            break
        calls.append(_call_from_object({"name": m.group(1), "arguments": args}))
        pos = end
        while tail.startswith(_MISTRAL, pos) or tail[pos:pos + 1].isspace():
            pos += len(_MISTRAL) if tail.startswith(_MISTRAL, pos) else 1
    return (calls, head.strip()) if calls else ([], text)


def _function_tags(text: str) -> tuple[list[ToolCall], str]:
    calls: list[ToolCall] = []
    rest: list[str] = []
    last = 0
    for m in _FUNCTION_TAG.finditer(text):
        name, body = m.group(1), m.group(2).strip()
        if body.startswith("{"):
            args, raw = _decode_arguments(body)
            calls.append(ToolCall(new_call_id(), name, args, raw))
        else:
            params = {k: _scalar(v) for k, v in _PARAMETER.findall(body)}
            calls.append(ToolCall(new_call_id(), name, params, json.dumps(params, ensure_ascii=False)))
        rest.append(text[last:m.start()])
        last = m.end()
    if not calls:
        return [], text
    rest.append(text[last:])
    # Qwen3-Coder wraps the function in <tool_call>…</tool_call>, which the content filter took.
    return calls, "".join(rest).strip()


def _scalar(raw: str) -> Any:
    """A ``<parameter>`` value: JSON when it is JSON (numbers, objects), else the text."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw
