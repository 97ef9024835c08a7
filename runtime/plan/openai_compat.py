"""The OpenAI-compatible chat-completions planner (K-EXAONE on FriendliAI by default).

Real HTTP with httpx against ``{base_url}/chat/completions``: tool calling over the narrowed
candidates only, streaming by default (``stream: true``, SSE, ``stream_options.include_usage``),
non-streaming on request. What differs between servers (text tool-call shapes, ``tool_choice``,
``content: null``, context size, usage while streaming) is the provider profile's
(``profiles.py``); the whole prompt is counted and fitted to the context (``prompt_budget.py``);
the system prompt and the tools stay byte-identical across the steps of a turn, so a server with
prefix caching reuses them. Every failure becomes a ``ProviderError`` with a stable code; see
``docs/providers.md`` for the table and for FriendliAI / vLLM / llama.cpp / Ollama settings.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import random
import re
import ssl
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from .protocol import Action, PlanContext, ProviderError, ToolCall, private_prompts
from .model_prompt import (
    CLOCK_DATA,
    LANGUAGE_RULE,
    REPAIR_PROMPT,
    SESSION_DATA,
    SYSTEM_PROMPT,
    UNGROUNDED_PROMPT,
)
from .profiles import (
    ENV_PROFILE,
    ProviderProfile,
    profile_for_url,
    profile_from_models,
    profile_named,
)
from .prompt_budget import (
    Calibration,
    PromptSize,
    message_tokens,
    text_tokens,
    tools_tokens,
)
from .provider_errors import (
    ENV_API_KEY,
    ENV_API_KEY_FALLBACK,
    ENV_BASE_URL,
    _body_error,
    _http_error,
)
from .stream import (
    ContentFilter,
    SSEParser,
    ToolCallAssembler,
    message_tool_calls,
    parse_tool_block,
)
from .toolcall_text import read_text_calls
from .openai_tools import ASK_TOOL, ask_tool, select_candidates, tool_for

DEFAULT_BASE_URL = "https://api.friendli.ai/serverless/v1"
DEFAULT_MODEL = "LGAI-EXAONE/K-EXAONE-236B-A23B"

ENV_MODEL = "UMMAYA_LLM_MODEL"
ENV_TIMEOUT = "UMMAYA_LLM_TIMEOUT_S"
ENV_STREAM = "UMMAYA_LLM_STREAM"
ENV_EXTRA_BODY = "UMMAYA_LLM_EXTRA_BODY"
ENV_CONTEXT = "UMMAYA_LLM_CONTEXT_TOKENS"

KST = dt.timezone(dt.timedelta(hours=9), "KST")

private_prompts(SYSTEM_PROMPT, UNGROUNDED_PROMPT, *LANGUAGE_RULE.values())  # never echoed to a citizen

Sleep = Callable[[float], Awaitable[None]]


class ProviderConfigError(ProviderError):
    """A required setting is missing (code ``provider_config``); the message names the variable."""

    def __init__(self, message: str, *, variable: str):
        super().__init__("provider_config", message)
        self.variable = variable


class OpenAICompatPlanner:
    """``Planner`` over any OpenAI-compatible ``/chat/completions`` endpoint with tool calling."""

    name = "openai_compat"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        *,
        profile: ProviderProfile | str | None = None,
        timeout_s: float | None = None,
        connect_timeout_s: float = 10.0,
        total_timeout_s: float | None = None,
        max_tools: int = 5,
        transport: httpx.AsyncBaseTransport | None = None,
        stream: bool = True,
        include_usage: bool | None = None,
        max_retries: int = 2,
        max_retry_wait_s: float = 30.0,
        transient_retries: int = 1,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        temperature: float | None = None,
        max_tokens: int | None = None,
        context_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        now: Callable[[], dt.datetime] | None = None,
    ):
        if not base_url:
            raise ProviderConfigError(f"{ENV_BASE_URL} is empty", variable=ENV_BASE_URL)
        if not model:
            raise ProviderConfigError(f"{ENV_MODEL} is empty", variable=ENV_MODEL)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.model = model
        # "auto": asked of the server's /models once, on the first plan() (until then: by URL).
        self._probe = profile == "auto"
        if isinstance(profile, str) and profile != "auto":
            profile = profile_named(profile)
        self.profile: ProviderProfile = (
            profile if isinstance(profile, ProviderProfile) else profile_for_url(self.base_url)
        )
        self._timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.total_timeout_s = total_timeout_s
        self.max_tools = max_tools
        self.stream = stream
        self._include_usage = include_usage
        self.max_retries = max_retries
        self.max_retry_wait_s = max_retry_wait_s
        self.transient_retries = transient_retries
        self.temperature = temperature
        self._max_tokens = max_tokens
        self._context_tokens = context_tokens
        self.extra_body = dict(extra_body or {})
        self.extra_headers = dict(extra_headers or {})
        self._transport = transport
        self._sleep = sleep
        self._jitter = jitter
        self._now = now or (lambda: dt.datetime.now(KST))
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.calibration = Calibration()
        # tool_choice values the server turned down (a 400 naming tool_choice): not sent again.
        self._refused_choices: set[str] = set()
        # Per turn (trace id): the tools decided on its first step, so every later step sends the
        # same bytes (prefix caching) — (adapter ids, description level, what the budget did).
        self._turn_tools: OrderedDict[str, tuple[tuple[str, ...], int, list[str]]] = OrderedDict()
        self.last_request: dict[str, Any] | None = None  # the body last sent (for traces/tests)
        self.last_prompt: dict[str, Any] = {}  # its budget report

    # Settings a profile supplies unless given: the profile may change once (probe).
    @property
    def timeout_s(self) -> float:
        return self._timeout_s if self._timeout_s is not None else self.profile.timeout_s

    @property
    def include_usage(self) -> bool:
        return self._include_usage if self._include_usage is not None else self.profile.usage_in_stream

    @property
    def max_tokens(self) -> int:
        return self._max_tokens if self._max_tokens is not None else self.profile.max_tokens

    @property
    def context_tokens(self) -> int:
        return self._context_tokens if self._context_tokens is not None else self.profile.context_tokens

    @property
    def turn_deadline_s(self) -> float | None:
        """The turn deadline this server needs (a CPU model: minutes), for the engine."""
        return self.profile.turn_deadline_s

    # ------------------------------------------------------------------------------ configuration

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, **overrides: Any
    ) -> OpenAICompatPlanner:
        """Settings from ``UMMAYA_LLM_*`` (API key falls back to ``FRIENDLI_TOKEN``).

        A hosted https endpoint (the FriendliAI default) needs a key; a plain-http or local server
        (vLLM or Ollama on ``localhost`` or the LAN) may run without one — if it wants one after
        all, its 401 surfaces as ``provider_auth``."""
        env = os.environ if env is None else env
        base_url = env.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        api_key = env.get(ENV_API_KEY) or env.get(ENV_API_KEY_FALLBACK) or None
        model = env.get(ENV_MODEL) or DEFAULT_MODEL
        if api_key is None and httpx.URL(base_url).scheme == "https" and not _is_local(base_url):
            raise ProviderConfigError(
                f"no API key for {base_url}: set {ENV_API_KEY} (or {ENV_API_KEY_FALLBACK} for "
                f"FriendliAI)",
                variable=ENV_API_KEY,
            )
        kwargs: dict[str, Any] = {}
        if env.get(ENV_TIMEOUT):
            try:
                kwargs["timeout_s"] = float(env[ENV_TIMEOUT])
            except ValueError:
                raise ProviderConfigError(
                    f"{ENV_TIMEOUT}={env[ENV_TIMEOUT]!r} is not a number", variable=ENV_TIMEOUT
                ) from None
        if env.get(ENV_CONTEXT):
            try:
                kwargs["context_tokens"] = int(env[ENV_CONTEXT])
                if kwargs["context_tokens"] < 256:
                    raise ValueError
            except ValueError:
                raise ProviderConfigError(
                    f"{ENV_CONTEXT}={env[ENV_CONTEXT]!r} is not a token count (≥ 256)", variable=ENV_CONTEXT
                ) from None
        if env.get(ENV_PROFILE):
            try:
                kwargs["profile"] = env[ENV_PROFILE] if env[ENV_PROFILE] == "auto" else profile_named(env[ENV_PROFILE])
            except ValueError as exc:
                raise ProviderConfigError(f"{ENV_PROFILE}: {exc}", variable=ENV_PROFILE) from None
        if env.get(ENV_STREAM):
            kwargs["stream"] = env[ENV_STREAM].strip().lower() not in ("0", "false", "no", "off")
        if env.get(ENV_EXTRA_BODY):
            try:
                extra = json.loads(env[ENV_EXTRA_BODY])
            except ValueError:
                extra = None
            if not isinstance(extra, dict):
                raise ProviderConfigError(
                    f"{ENV_EXTRA_BODY} must be a JSON object", variable=ENV_EXTRA_BODY
                )
            kwargs["extra_body"] = extra
        kwargs.update({k: v for k, v in overrides.items() if v is not None})
        return cls(base_url, api_key, model, **kwargs)

    # ---------------------------------------------------------------------------------- requests

    def system_prompt(self, language: str) -> str:
        """The engine's own text, the same for every step and turn of a language (no clock)."""
        return SYSTEM_PROMPT.format(language_rule=LANGUAGE_RULE.get(language, LANGUAGE_RULE["ko"]))

    def build_messages(self, ctx: PlanContext) -> list[dict[str, Any]]:
        """The system prompt is the engine's own text and nothing else: whatever came from a
        session or an upstream travels in user/tool messages, marked as data. The turn's fixed
        facts (the clock, what the session carried in) sit with the citizen's first message, so
        each step's prompt extends the last one's byte for byte."""
        # Earlier system messages are dropped, not merged: only the engine writes the system prompt.
        rest = [self._outgoing(m) for m in ctx.messages if m.get("role") != "system"]
        if not any(m.get("role") == "user" for m in rest):
            rest.insert(0, {"role": "user", "content": ctx.request})
        carried = ctx.carried if ctx.carried is not None else ctx.slots
        session: dict[str, Any] = dict(carried or {})
        hints = getattr(ctx, "dialogue", None)
        if hints is not None and hints.kind != "new":
            # How the engine read this message against the conversation (runtime/dialogue): the
            # intent it continues and what carries — data for the model, like the slots.
            session["conversation"] = {k: v for k, v in {
                "reading": hints.kind, "continues": hints.pinned, "place": hints.place,
                "carried_arguments": hints.carried or None}.items() if v}
        blocks = []
        if session:
            facts = json.dumps(session, ensure_ascii=False, sort_keys=True, default=str)
            blocks.append(SESSION_DATA.format(facts=facts))
        clock = (ctx.clock or self._now()).astimezone(KST)
        blocks.append(CLOCK_DATA.format(now=clock.strftime("%Y-%m-%d %H:%M (%A) KST")))
        first = next(i for i, m in enumerate(rest) if m.get("role") == "user")
        # One user message (several chat templates reject two in a row): the words, then the data.
        rest[first] = {**rest[first], "content": f"{rest[first].get('content') or ''}\n\n" + "\n".join(blocks)}
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt(ctx.language)}, *rest]
        if ctx.repair:
            if getattr(ctx, "repair_kind", "validation") == "ungrounded":
                messages.append({"role": "assistant", "content": ctx.repair})
                messages.append({"role": "user", "content": "[engine] " + UNGROUNDED_PROMPT})
            else:
                messages = _with_repair(messages, ctx.repair)
        return messages

    def _outgoing(self, m: dict[str, Any]) -> dict[str, Any]:
        """A conversation message as this server takes it: an assistant tool-call message's
        ``content`` omitted, ``""`` or null as the profile says (llama.cpp answers 500 to null)."""
        m = dict(m)
        if m.get("role") == "assistant" and m.get("tool_calls") and not m.get("content"):
            how = self.profile.assistant_content
            if how == "omit":
                m.pop("content", None)
            else:
                m["content"] = "" if how == "empty" else None
        return m

    def _tools(self, ctx: PlanContext, system: str, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], PromptSize]:
        """The turn's tools, decided on its first step and kept for every later one; fitted to the
        context: shorter descriptions first (the summary, then the parameters' descriptions),
        then fewer tools (never a locate step a kept one needs). Returns the tools and the
        prompt's measured size."""
        from .openai_tools import drop_one

        limit = max(256, (ctx.context_tokens or self.context_tokens) - self.max_tokens)
        cal = self.calibration
        sys_t = cal.tokens(text_tokens(system) + 4)
        msg_t = cal.tokens(sum(message_tokens(m) for m in messages))
        by_id = {m.id: m for m in ctx.candidates}
        known = set((ctx.carried if ctx.carried is not None else ctx.slots) or ())
        decided = self._turn_tools.get(ctx.trace_id) if ctx.trace_id else None
        if decided is not None and all(i in by_id for i in decided[0]):
            ids, level, trimmed = decided
            kept = [by_id[i] for i in ids]
            tools = self._render(kept, level)
            size = PromptSize(sys_t, cal.tokens(tools_tokens(tools)), msg_t, limit, list(trimmed))
            if size.fits or len(kept) <= 1:
                return tools, size
            trimmed = [*trimmed, "re-trimmed mid-turn (the prompt prefix changes)"]
        else:
            kept = [m for m in select_candidates(ctx.candidates, self.max_tools, known) if m.id != ASK_TOOL]
            level, trimmed = 0, []
        tools = self._render(kept, level)
        size = PromptSize(sys_t, cal.tokens(tools_tokens(tools)), msg_t, limit, list(trimmed))
        for lv, what in ((1, "short tool descriptions"), (2, "no parameter descriptions")):
            if size.fits or level >= lv:
                continue
            level = lv
            tools = self._render(kept, level)
            size.tools = cal.tokens(tools_tokens(tools))
            size.trimmed.append(what)
        # A locate step a kept tool needs stays, at the turn's start even when the session holds
        # that slot (a follow-up about a new place, 「서울 중구는?」, needs it again); mid-turn,
        # not once this turn's results hold it.
        found = set(ctx.slots or ()) if decided is not None else set()
        while not size.fits:
            fewer = drop_one(kept, found)
            if fewer is None:
                break
            size.trimmed.append(f"dropped tool {next(m.id for m in kept if m not in fewer)}")
            kept = fewer
            tools = self._render(kept, level)
            size.tools = cal.tokens(tools_tokens(tools))
        if ctx.trace_id:
            self._turn_tools[ctx.trace_id] = (tuple(m.id for m in kept), level, list(size.trimmed))
            while len(self._turn_tools) > 256:
                self._turn_tools.popitem(last=False)
        return tools, size

    @staticmethod
    def _render(kept: list[Any], level: int) -> list[dict[str, Any]]:
        tools = [tool_for(m, short=level >= 1, bare=level >= 2) for m in kept]
        if tools:
            tools.append(ask_tool([m.id for m in kept]))
        return tools

    def _tool_choice(self, ctx: PlanContext) -> str:
        """``required`` on a first step without evidence (the model must act: call or ask through
        ask_citizen), ``none`` on the last step (the model must answer from what it has), where
        the profile says the server honours them; else ``auto``."""
        p = self.profile
        if ctx.step == 0 and not ctx.evidence and not ctx.repair and p.tool_choice_required \
                and "required" not in self._refused_choices:
            return "required"
        last = ctx.max_steps is not None and ctx.step >= ctx.max_steps - 1
        if last and ctx.evidence and p.tool_choice_none and "none" not in self._refused_choices:
            return "none"
        return "auto"

    def build_request(self, ctx: PlanContext) -> dict[str, Any]:
        messages = self.build_messages(ctx)
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        tools, size = self._tools(ctx, messages[0]["content"], messages[1:]) if ctx.candidates else ([], None)
        if tools:
            body["tools"] = tools
            body["tool_choice"] = self._tool_choice(ctx)
            if self.profile.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self.profile.parallel_tool_calls
        if size is None:
            size = PromptSize(self.calibration.tokens(text_tokens(messages[0]["content"]) + 4), 0,
                              self.calibration.tokens(sum(message_tokens(m) for m in messages[1:])),
                              max(256, (ctx.context_tokens or self.context_tokens) - self.max_tokens))
        if self.stream:
            body["stream"] = True
            if self.include_usage:
                body["stream_options"] = {"include_usage": True}
        else:
            body["stream"] = False
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body["max_tokens"] = self.max_tokens
        # The operator's extra body wins (tool_choice included); what the conversation is, is not theirs.
        for k, v in self.extra_body.items():
            if k not in ("messages", "tools", "stream"):
                body[k] = v
        self.last_prompt = size.report(
            profile=self.profile.name, tools_sent=max(0, len(tools) - 1), tools_offered=len(ctx.candidates),
            tool_choice=body.get("tool_choice"), calibration=round(self.calibration.ratio, 3),
            context_tokens=ctx.context_tokens or self.context_tokens, max_tokens=self.max_tokens)
        self._estimate = (size.total / self.calibration.ratio) if self.calibration.ratio else size.total
        return body

    def _headers(self) -> dict[str, str]:
        accept = "text/event-stream" if self.stream else "application/json"
        h = {"Content-Type": "application/json", "Accept": accept}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        h.update(self.extra_headers)
        return h

    def _get_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            # A client's pool belongs to one event loop; CLI commands each run their own loop.
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=httpx.Timeout(self.timeout_s, connect=min(self.connect_timeout_s, self.timeout_s)),
                follow_redirects=False,
                verify=_ssl_context(),
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> OpenAICompatPlanner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _probe_profile(self) -> None:
        """``UMMAYA_LLM_PROFILE=auto``: ask ``GET /models`` once; whatever it says (or not), the
        profile is settled after it."""
        self._probe = False
        try:
            resp = await self._get_client().get(f"{self.base_url}/models", headers=self._headers())
            if resp.status_code == 200:
                self.profile = profile_from_models(resp.json(), self.base_url)
        except (httpx.HTTPError, ValueError):
            pass

    # -------------------------------------------------------------------------------------- plan

    async def plan(
        self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None
    ) -> Action:
        if self._probe:
            await self._probe_profile()
        body = self.build_request(ctx)
        self.last_request = body
        if self.total_timeout_s is None:
            action = await self._plan_with_retries(ctx, body, on_delta)
        else:
            try:
                async with asyncio.timeout(self.total_timeout_s):
                    action = await self._plan_with_retries(ctx, body, on_delta)
            except TimeoutError:
                raise ProviderError(
                    "provider_timeout",
                    f"no complete answer from {self.model} within {self.total_timeout_s:g} s",
                ) from None
        measured = action.usage.get("prompt_tokens")
        prompt = dict(self.last_prompt)
        if measured:
            prompt["measured_prompt_tokens"] = measured
            self.calibration.observe(self._estimate, measured)
        action.prompt = prompt
        return action

    async def _plan_with_retries(
        self, ctx: PlanContext, body: dict[str, Any], on_delta: Callable[[str], None] | None
    ) -> Action:
        attempt = transient = 0
        while True:
            try:
                return await self._once(ctx, body, on_delta)
            except ProviderError as e:
                choice = body.get("tool_choice")
                if choice in ("required", "none") and "tool_choice" not in self.extra_body \
                        and e.code in ("provider_capability", "provider_bad_response") \
                        and "tool_choice" in e.message.lower().replace(" ", "_"):
                    # The server turned that tool_choice down: never again, and this request as auto.
                    self._refused_choices.add(choice)
                    body["tool_choice"] = "auto"
                    self.last_prompt["tool_choice"] = "auto"
                    continue
                if e.transient and transient < self.transient_retries:
                    transient += 1
                    base = e.retry_after if e.retry_after is not None and e.retry_after <= 5 else 0.5
                    await self._sleep(base * (0.5 + self._jitter()))  # jitter: no thundering herd
                    continue
                if e.code != "provider_rate_limited" or attempt >= self.max_retries:
                    raise
                wait = e.retry_after if e.retry_after is not None else min(2.0**attempt, 8.0)
                if wait > self.max_retry_wait_s:
                    raise  # the provider asks for longer than a citizen should wait
                attempt += 1
                await self._sleep(wait)

    async def _once(
        self, ctx: PlanContext, body: dict[str, Any], on_delta: Callable[[str], None] | None
    ) -> Action:
        url = f"{self.base_url}/chat/completions"
        client = self._get_client()
        started = False  # response headers received: a later connection loss is a cut stream
        self._received = False  # any content or tool-call fragment arrived
        try:
            async with client.stream("POST", url, json=body, headers=self._headers()) as resp:
                started = True
                if resp.status_code != 200:
                    raw = await resp.aread()
                    raise _http_error(resp.status_code, resp.headers, raw, self.model, url)
                ctype = resp.headers.get("content-type", "")
                if "text/event-stream" in ctype:  # by what came, not what was asked for
                    return await self._read_stream(ctx, resp, on_delta)
                raw = await resp.aread()
                return self._read_json(ctx, raw, on_delta)
        except ProviderError as e:
            if e.code == "provider_stream_cut" and not self._received:
                e.transient = True  # nothing of it arrived: as good as never sent
            raise
        except httpx.TimeoutException as e:
            raise ProviderError(
                "provider_timeout",
                f"{type(e).__name__}: no reply from {self.base_url} within {self.timeout_s:g} s",
            ) from None
        except (httpx.RemoteProtocolError, httpx.NetworkError) as e:
            if started:
                raise ProviderError(
                    "provider_stream_cut",
                    f"connection to {self.base_url} closed mid-reply ({e}); the partial output is "
                    "discarded",
                    transient=not self._received,
                ) from None
            raise ProviderError(
                "provider_unavailable", f"cannot reach {self.base_url}: {type(e).__name__}: {e}",
                transient=True,
            ) from None
        except httpx.HTTPError as e:
            raise ProviderError(
                "provider_unavailable", f"{type(e).__name__} talking to {self.base_url}: {e}"
            ) from None

    async def _read_stream(
        self,
        ctx: PlanContext,
        resp: httpx.Response,
        on_delta: Callable[[str], None] | None,
    ) -> Action:
        sse = SSEParser()
        content = ContentFilter()
        calls = ToolCallAssembler()
        usage: dict[str, int] = {}
        finish: str | None = None
        done = False
        events = 0

        def handle(data: str) -> bool:
            nonlocal finish, events
            if data.strip() == "[DONE]":
                return True
            events += 1
            try:
                obj = json.loads(data)
            except ValueError:
                raise ProviderError(
                    "provider_bad_response", f"stream chunk is not JSON: {data[:200]!r}"
                ) from None
            if not isinstance(obj, dict):
                raise ProviderError(
                    "provider_bad_response", f"stream chunk is not an object: {data[:200]!r}"
                )
            if obj.get("error") is not None or obj.get("object") == "error":
                raise _body_error(obj, self.model)
            if isinstance(obj.get("usage"), dict):
                usage.update(_usage(obj["usage"]))
            for choice in obj.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                text = delta.get("content")
                if isinstance(text, str) and text:
                    self._received = True
                    visible = content.feed(text)
                    if visible and on_delta is not None:
                        on_delta(visible)
                if isinstance(delta.get("tool_calls"), list):
                    self._received = True
                    calls.feed(delta["tool_calls"])
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
            return False

        async for line in resp.aiter_lines():
            ev = sse.feed_line(line)
            if ev is not None and handle(ev.data):
                done = True
                break
        if not done:
            ev = sse.flush()
            if ev is not None and handle(ev.data):
                done = True
        if not done and finish is None:
            raise ProviderError(
                "provider_stream_cut",
                f"the stream from {self.model} ended without [DONE] or a finish_reason after "
                f"{events} chunk(s); the partial output is discarded",
            )
        tail = content.finish()
        if tail and on_delta is not None:
            on_delta(tail)
        return self._action(ctx, content, calls.calls(), usage, finish)

    def _read_json(
        self, ctx: PlanContext, raw: bytes, on_delta: Callable[[str], None] | None
    ) -> Action:
        try:
            obj = json.loads(raw)
        except ValueError:
            raise ProviderError(
                "provider_bad_response", f"response is not JSON: {raw[:200]!r}"
            ) from None
        if not isinstance(obj, dict):
            raise ProviderError("provider_bad_response", "response is not a JSON object")
        if obj.get("error") is not None or obj.get("object") == "error":
            raise _body_error(obj, self.model)
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError("provider_bad_response", "response has no choices")
        msg = choices[0].get("message") or {}
        content = ContentFilter()
        text = msg.get("content")
        if isinstance(text, list):  # content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        if isinstance(text, str):
            content.feed(text)
        content.finish()
        if content.text and on_delta is not None:
            on_delta(content.text)
        tool_calls = msg.get("tool_calls")
        tool_calls = tool_calls if isinstance(tool_calls, list) else []
        usage = _usage(obj["usage"]) if isinstance(obj.get("usage"), dict) else {}
        return self._action(
            ctx, content, message_tool_calls(tool_calls), usage, choices[0].get("finish_reason")
        )

    # ---------------------------------------------------------------------------- action mapping

    def _action(
        self,
        ctx: PlanContext,
        content: ContentFilter,
        calls: list[ToolCall],
        usage: dict[str, int],
        finish: str | None,
    ) -> Action:
        calls = calls + [c for b in content.tool_blocks for c in parse_tool_block(b)]
        text = content.text.strip()
        if not calls and text:
            # No server-side parser: the call is in the text, in a shape this profile accepts.
            calls, text = read_text_calls(text, self.profile.text_tool_formats)
            text = text.strip()
        asks = [c for c in calls if c.adapter_id == ASK_TOOL]
        calls = [c for c in calls if c.adapter_id != ASK_TOOL]
        if calls:
            return Action(kind="call", calls=calls, text=text, usage=usage)
        if asks:
            return self._ask(ctx, asks[0], text, usage)
        if not text:
            raise ProviderError(
                "provider_bad_response",
                f"{self.model} sent an empty reply (finish_reason: {finish or 'none'}): neither "
                "text nor a tool call",
            )
        if finish == "length":
            # Cut at max_tokens: the end of the answer is missing, and a half sentence is no answer.
            raise ProviderError(
                "provider_bad_response",
                f"{self.model}'s reply was cut at max_tokens={self.max_tokens} (finish_reason: "
                "length); the partial answer is discarded",
            )
        # The prompt's own markup echoed back (「the <data>부산대학교병원</data>」) is not prose.
        text = _ECHOED_MARKUP.sub("", text).strip()
        if not ctx.evidence and _is_question(text):
            return Action(kind="ask", text=text, usage=usage)
        return Action(kind="answer", text=text, usage=usage)

    def _ask(self, ctx: PlanContext, call: ToolCall, text: str, usage: dict[str, int]) -> Action:
        """ask_citizen → the ``ask`` action, naming the tool it is for like the offline planner."""
        args = call.arguments or {}
        question = args.get("question") if isinstance(args.get("question"), str) else text
        offered = {m.id for m in ctx.candidates}
        tool = args.get("tool") if args.get("tool") in offered else None
        missing = [str(s) for s in args.get("missing") or [] if isinstance(s, (str, int))] \
            if isinstance(args.get("missing"), list) else []
        known = args.get("arguments")
        known = known if isinstance(known, dict) else {}
        return Action(kind="ask", text=(question or "").strip(), missing=missing,
                      calls=[ToolCall("", tool, dict(known))] if tool else [], usage=usage)


# ------------------------------------------------------------------------------------- helpers


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process (httpx builds a new one per client: 0.1–0.3 s)."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        try:
            import certifi

            _SSL_CONTEXT = ssl.create_default_context(cafile=certifi.where())
        except ImportError:  # pragma: no cover - certifi ships with httpx
            _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def _is_local(url: str) -> bool:
    host = httpx.URL(url).host
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")


def _with_repair(messages: list[dict[str, Any]], error: str) -> list[dict[str, Any]]:
    """The validation error, once, where the model can use it. The engine shows a refused call as
    the model's own assistant message with a ``tool`` reply carrying the error; then there is
    nothing to add. A history whose last tool calls have no result yet gets the error as their
    results (OpenAI requires one per call id). Otherwise the note joins the last user message:
    several chat templates reject two user messages in a row."""
    text = REPAIR_PROMPT.format(error=error)
    last = messages[-1] if messages else None
    if last and last.get("role") == "tool":
        return messages
    if last and last.get("role") == "assistant" and last.get("tool_calls"):
        return messages + [
            {"role": "tool", "tool_call_id": tc.get("id", ""), "content": text}
            for tc in last["tool_calls"]
            if isinstance(tc, dict)
        ]
    if last and last.get("role") == "user":
        return messages[:-1] + [{**last, "content": f"{last.get('content') or ''}\n\n[validation] {text}"}]
    return messages + [{"role": "user", "content": "[validation] " + text}]


_ECHOED_MARKUP = re.compile(r"</?data(?:\s[^>]*)?>")


def _is_question(text: str) -> bool:
    """A clear question back to the citizen: the last sentence ends with a question mark."""
    last = text.rstrip().rstrip(")]」』\"'").rstrip()
    return last.endswith(("?", "？"))


def _usage(u: dict[str, Any]) -> dict[str, int]:
    return {
        k: int(u[k])
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(u.get(k), (int, float)) and not isinstance(u.get(k), bool)
    }
