"""Assembling an OpenAI-compatible chat-completions stream into one model turn.

Three independent pieces, each fed incrementally:

- ``SSEParser``: text lines → server-sent events (``data:`` lines joined, comments skipped).
- ``ContentFilter``: content deltas → the text a citizen may see. ``<think>…</think>`` reasoning is
  dropped and ``<tool_call>{…}</tool_call>`` blocks (hermes style, what K-EXAONE and Qwen emit when
  the server has no tool parser) are captured as tool calls; tags split across chunk boundaries are
  held back until it is clear whether they are tags.
- ``ToolCallAssembler``: ``delta.tool_calls`` fragments → complete calls, keyed by ``index`` (id and
  name arrive first, arguments are concatenated across chunks).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from .protocol import ToolCall

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
TOOL_OPEN = "<tool_call>"
TOOL_CLOSE = "</tool_call>"


def new_call_id() -> str:
    return "call_" + secrets.token_hex(6)


# --------------------------------------------------------------------------------------------- SSE


@dataclass
class SSEEvent:
    data: str
    event: str | None = None


class SSEParser:
    """Incremental server-sent-events parser (WHATWG rules that matter for chat completions)."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event: str | None = None

    def feed_line(self, line: str) -> SSEEvent | None:
        line = line.rstrip("\r\n")
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        # id / retry / unknown fields: irrelevant here
        return None

    def flush(self) -> SSEEvent | None:
        """An event still pending when the stream ended (no blank line after it)."""
        return self._dispatch()

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = None
            return None
        ev = SSEEvent(data="\n".join(self._data), event=self._event)
        self._data, self._event = [], None
        return ev


# ---------------------------------------------------------------------------------- content filter


_MAX_HELD = max(len(t) for t in (THINK_OPEN, THINK_CLOSE, TOOL_OPEN, TOOL_CLOSE)) - 1


def _held_suffix(buf: str, tags: tuple[str, ...]) -> int:
    """Length of the longest suffix of ``buf`` that is a proper prefix of one of ``tags``."""
    # Every tag starts with "<", so only a suffix starting at a "<" can be one (the fast path).
    start = len(buf) - _MAX_HELD
    start = start if start > 0 else 0
    p = buf.find("<", start)
    while p >= 0:
        tail = buf[p:]
        for t in tags:
            if t.startswith(tail):
                return len(tail)
        p = buf.find("<", p + 1)
    return 0


class ContentFilter:
    """Separates visible text from leaked reasoning and in-content tool calls, incrementally."""

    _TEXT_TAGS = (THINK_OPEN, TOOL_OPEN, THINK_CLOSE)

    def __init__(self) -> None:
        self._buf = ""
        self._state = "text"  # text | think | tool
        self._tool = ""
        self.visible: list[str] = []  # everything returned by feed()/finish(), minus retractions
        self.tool_blocks: list[str] = []
        self.reasoning_chars = 0
        self.orphan_think_close = False

    @property
    def text(self) -> str:
        return "".join(self.visible)

    def feed(self, chunk: str) -> str:
        self._buf += chunk
        out: list[str] = []
        while self._buf:
            if self._state == "text":
                hits = [(self._buf.find(t), t) for t in self._TEXT_TAGS]
                hits = [(i, t) for i, t in hits if i >= 0]
                if hits:
                    i, tag = min(hits)
                    out.append(self._buf[:i])
                    self._buf = self._buf[i + len(tag) :]
                    if tag == THINK_OPEN:
                        self._state = "think"
                    elif tag == TOOL_OPEN:
                        self._state, self._tool = "tool", ""
                    else:
                        # "</think>" with no opening tag: the chat template opened the reasoning
                        # block in the prompt, so everything before it was reasoning. Text already
                        # streamed cannot be recalled; the final text drops it.
                        self.orphan_think_close = True
                        self.reasoning_chars += sum(len(v) for v in self.visible) + sum(
                            len(o) for o in out
                        )
                        self.visible.clear()
                        out.clear()
                    continue
                k = _held_suffix(self._buf, self._TEXT_TAGS)
                cut = len(self._buf) - k
                out.append(self._buf[:cut])
                self._buf = self._buf[cut:]
                break
            if self._state == "think":
                i = self._buf.find(THINK_CLOSE)
                if i >= 0:
                    self.reasoning_chars += i
                    self._buf = self._buf[i + len(THINK_CLOSE) :]
                    self._state = "text"
                    continue
                k = _held_suffix(self._buf, (THINK_CLOSE,))
                self.reasoning_chars += len(self._buf) - k
                self._buf = self._buf[len(self._buf) - k :]
                break
            # tool
            i = self._buf.find(TOOL_CLOSE)
            if i >= 0:
                self._tool += self._buf[:i]
                self.tool_blocks.append(self._tool)
                self._tool = ""
                self._buf = self._buf[i + len(TOOL_CLOSE) :]
                self._state = "text"
                continue
            k = _held_suffix(self._buf, (TOOL_CLOSE,))
            self._tool += self._buf[: len(self._buf) - k]
            self._buf = self._buf[len(self._buf) - k :]
            break
        text = "".join(out)
        if not self.visible:
            text = text.lstrip()  # whitespace left between a reasoning block and the answer
        if text:
            self.visible.append(text)
        return text

    def finish(self) -> str:
        """End of content: a held-back partial tag that never completed is plain text; an
        unclosed ``<tool_call>`` (the end-of-turn token cut the closing tag) still counts."""
        rest = ""
        if self._state == "text":
            rest = self._buf
        elif self._state == "think":
            self.reasoning_chars += len(self._buf)
        else:
            block = self._tool + self._buf
            if block.strip():
                self.tool_blocks.append(block)
        self._buf, self._tool, self._state = "", "", "text"
        if not self.visible:
            rest = rest.lstrip()
        if rest:
            self.visible.append(rest)
        return rest


_NAME_RE = re.compile(r'"name"\s*:\s*"([^"\\]*)"')
_ARGS_RE = re.compile(r'"(?:arguments|parameters)"\s*:\s*(.*)\}\s*$', re.S)


def parse_tool_block(block: str) -> list[ToolCall]:
    """One ``<tool_call>`` body → its ToolCall(s): an object ``{"name", "arguments"|"parameters"}``
    or a list of them (Llama-style). Unparseable bodies still yield a call (arguments None) so the
    engine can ask for a repair instead of silently dropping what the model wanted."""
    raw = block.strip()
    try:
        obj = json.loads(raw)
    except ValueError:
        obj = None
    objs = obj if isinstance(obj, list) else [obj]
    if objs and all(isinstance(o, dict) and isinstance(o.get("name"), str) for o in objs):
        return [_call_from_object(o) for o in objs]
    name = _NAME_RE.search(raw)
    args_m = _ARGS_RE.search(raw)
    return [
        ToolCall(
            new_call_id(),
            name.group(1) if name else "",
            None,
            args_m.group(1).strip() if args_m else raw,
        )
    ]


def _call_from_object(obj: dict[str, Any]) -> ToolCall:
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        return ToolCall(new_call_id(), obj["name"], *_decode_arguments(args))
    raw_args = json.dumps(args, ensure_ascii=False)
    return ToolCall(new_call_id(), obj["name"], args if isinstance(args, dict) else None, raw_args)


def _decode_arguments(raw: str) -> tuple[dict[str, Any] | None, str]:
    """Arguments JSON text → (object or None, raw text). Empty text means no arguments: ``{}``.
    A JSON *string* holding an object (double-encoded, some servers do this) is decoded once more."""
    if raw.strip() == "":
        return {}, raw
    try:
        val = json.loads(raw)
    except ValueError:
        return None, raw
    if isinstance(val, str):
        try:
            inner = json.loads(val)
        except ValueError:
            return None, raw
        val = inner
    return (val if isinstance(val, dict) else None), raw


# ------------------------------------------------------------------------------- tool-call deltas


@dataclass
class _Slot:
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """``delta.tool_calls`` fragments → calls, reassembled by ``index``.

    Tolerates what real servers do beyond the OpenAI reference: the id repeated on every fragment
    (SGLang), fragments without ``index`` (older Ollama), a new call reusing index 0 with a new id
    (some vLLM versions for parallel calls), arguments sent as an object instead of a string.
    """

    def __init__(self) -> None:
        self._slots: list[_Slot] = []
        self._by_index: dict[int, int] = {}

    def feed(self, fragments: list[dict[str, Any]]) -> None:
        for pos, frag in enumerate(fragments):
            if not isinstance(frag, dict):
                continue
            fn = frag.get("function") or {}
            fid = frag.get("id") or ""
            name = fn.get("name") or ""
            idx = frag.get("index")
            if not isinstance(idx, int):
                # No index: a new id starts a call, otherwise continue the latest one.
                if fid and all(s.id != fid for s in self._slots) or not self._slots:
                    idx = -(len(self._slots) + 1)  # synthetic, unique
                else:
                    idx = next(
                        (k for k, v in self._by_index.items() if v == len(self._slots) - 1), pos
                    )
            slot_no = self._by_index.get(idx)
            if slot_no is not None:
                slot = self._slots[slot_no]
                if fid and slot.id and fid != slot.id and name:
                    slot_no = None  # same index reused by a different call
            if slot_no is None:
                self._slots.append(_Slot())
                slot_no = len(self._slots) - 1
                self._by_index[idx] = slot_no
            slot = self._slots[slot_no]
            if fid and not slot.id:
                slot.id = fid
            if name and not slot.name:
                slot.name = name
            args = fn.get("arguments")
            if isinstance(args, str):
                slot.parts.append(args)
            elif args is not None:
                slot.parts.append(json.dumps(args, ensure_ascii=False))

    def __len__(self) -> int:
        return len(self._slots)

    def calls(self) -> list[ToolCall]:
        out = []
        for s in self._slots:
            raw = "".join(s.parts)
            args, raw = _decode_arguments(raw)
            out.append(ToolCall(s.id or new_call_id(), s.name, args, raw))
        return out


def message_tool_calls(tool_calls: list[dict[str, Any]]) -> list[ToolCall]:
    """Non-streaming ``message.tool_calls`` → ToolCalls (same decoding rules as the stream)."""
    asm = ToolCallAssembler()
    asm.feed([{**tc, "index": i} for i, tc in enumerate(tool_calls) if isinstance(tc, dict)])
    return asm.calls()
