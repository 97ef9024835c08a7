"""Provider profiles: what a given OpenAI-compatible server does and does not do.

The chat-completions wire format is shared, the behaviour around it is not: llama.cpp's server
answers HTTP 500 to ``"content": null`` on an assistant message (llama-cpp-python 0.3, recorded
2026-12-01); Ollama ignores ``tool_choice`` and truncates a prompt longer than its context from the
front, silently; a model served without a tool-call parser writes its calls as text (``<tool_call>``
tags, ```` ```json ```` fences, a bare JSON object, ``[TOOL_CALLS]``, ``<function=…>``). A profile
names those differences once, so the planner never guesses from the model's name.

Chosen by ``UMMAYA_LLM_PROFILE`` (``openai``, ``vllm``, ``llamacpp``, ``ollama``, ``friendli``,
``generic``, or ``auto`` to probe the server's ``/models`` once); unset, the base URL's host
decides (FriendliAI and OpenAI by host, Ollama by its port), else ``generic``. Every field can be
overridden by a constructor argument of the planner, and ``UMMAYA_LLM_EXTRA_BODY`` still wins over
anything the planner puts in a request body (``tool_choice`` included).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import httpx

# Text shapes a model writes a tool call in when the server does not parse it (toolcall_text.py).
TEXT_FORMATS = ("tag", "fence", "bare", "mistral", "function_tag")

AssistantContent = Literal["omit", "empty", "null"]


@dataclass(frozen=True)
class ProviderProfile:
    name: str
    # Which text shapes count as tool calls (besides the server's own ``tool_calls``).
    text_tool_formats: tuple[str, ...] = TEXT_FORMATS
    # ``tool_choice: "required"`` on a first step without evidence (vLLM guided decoding,
    # llama-server grammars, FriendliAI) and ``"none"`` on the last step; a server that ignores
    # the field (Ollama) gains nothing from it.
    tool_choice_required: bool = False
    tool_choice_none: bool = False
    # What an assistant tool-call message carries as ``content``: "omit" (the key is left out),
    # "empty" (``""``: llama.cpp answers 500 to null and old llama-server wanted the key), "null".
    assistant_content: AssistantContent = "omit"
    # The model's context window in tokens (prompt + reply) unless UMMAYA_LLM_CONTEXT_TOKENS says.
    context_tokens: int = 8192
    # ``stream_options.include_usage``: sent, and the server reports usage at the end of a stream.
    usage_in_stream: bool = True
    max_tokens: int = 1024  # sent when nothing else says: a reply has a bound
    # ``parallel_tool_calls`` sent as this value; None leaves the server's default alone.
    parallel_tool_calls: bool | None = None
    timeout_s: float = 60.0  # first byte, and between two stream chunks
    # A turn deadline this kind of server needs (a CPU model takes 100–200 s per step); None: the
    # engine's default (UMMAYA_TURN_DEADLINE_S, else 120 s).
    turn_deadline_s: float | None = None

    def replace(self, **changes: Any) -> ProviderProfile:
        return dataclasses.replace(self, **changes)


PROFILES: dict[str, ProviderProfile] = {
    p.name: p
    for p in (
        # OpenAI parses its own tool calls; a <tool_call> tag in text is still read, never shown.
        ProviderProfile("openai", text_tool_formats=("tag",), tool_choice_required=True,
                        tool_choice_none=True, context_tokens=128000, parallel_tool_calls=True),
        ProviderProfile("friendli", text_tool_formats=("tag",), tool_choice_required=True,
                        tool_choice_none=True, context_tokens=32768, parallel_tool_calls=True),
        # vLLM with --enable-auto-tool-choice; a parser that misses (or none for the model's
        # format) leaves the calls in content, in whatever shape the template taught the model.
        ProviderProfile("vllm", tool_choice_required=True, tool_choice_none=True,
                        context_tokens=8192, timeout_s=120.0),
        # llama.cpp's server (llama-server --jinja) and llama-cpp-python: often no parser for the
        # model's format, 500 on null content, no usage while streaming, CPU-slow.
        ProviderProfile("llamacpp", tool_choice_required=True, tool_choice_none=True,
                        assistant_content="empty", context_tokens=4096, usage_in_stream=False,
                        max_tokens=512, timeout_s=300.0, turn_deadline_s=900.0),
        # Ollama: tool_choice is ignored; the context is num_ctx (2,048 tokens by default in the
        # versions documented in docs/providers.md), and a longer prompt loses its beginning.
        ProviderProfile("ollama", context_tokens=2048, max_tokens=512, timeout_s=300.0,
                        turn_deadline_s=900.0),
        # Unknown server: accept every text shape, send nothing it might reject.
        ProviderProfile("generic", assistant_content="empty"),
    )
}

ENV_PROFILE = "UMMAYA_LLM_PROFILE"


def profile_named(name: str) -> ProviderProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r} (known: {', '.join(sorted(PROFILES))}, auto)") from None


def profile_for_url(base_url: str) -> ProviderProfile:
    """The profile a base URL implies without asking the server (None of these need a request)."""
    url = httpx.URL(base_url)
    host = url.host or ""
    if host.endswith("friendli.ai"):
        return PROFILES["friendli"]
    if host == "api.openai.com":
        return PROFILES["openai"]
    if url.port == 11434:  # Ollama's port
        return PROFILES["ollama"]
    return PROFILES["generic"]


def profile_from_models(listing: Any, base_url: str) -> ProviderProfile:
    """The profile a ``GET /models`` reply implies (``UMMAYA_LLM_PROFILE=auto``): vLLM says
    ``owned_by: vllm`` and ``max_model_len``; llama-server ``owned_by: llamacpp`` and
    ``meta.n_ctx_train``; Ollama ``owned_by: library``. A context size the server states is used."""
    rows = listing.get("data") if isinstance(listing, dict) else None
    row = rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else {}
    owner = str(row.get("owned_by") or "").lower()
    if owner == "vllm":
        p = PROFILES["vllm"]
        n = row.get("max_model_len")
    elif owner in ("llamacpp", "llama.cpp", "me"):  # "me": llama-cpp-python's server
        p = PROFILES["llamacpp"]
        meta = row.get("meta")
        n = (meta.get("n_ctx") if isinstance(meta, dict) else None) or None  # n_ctx_train is the model's, not the server's -c
    elif owner in ("library", "ollama"):
        p, n = PROFILES["ollama"], None
    else:
        p, n = profile_for_url(base_url), None
    if isinstance(n, int) and not isinstance(n, bool) and n >= 512:
        p = p.replace(context_tokens=n)
    return p
