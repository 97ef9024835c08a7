"""The MCP server: the official SDK's low-level ``Server`` over the turn service (runtime/service.py).

The low-level server, not ``MCPServer``: ``MCPServer`` derives a tool's schemas from a Python
function's signature, while here every tool's input and output schema *is* its manifest's, and
the tool set is whatever release is active.

An adapter tool runs the turn's own stage functions for one call, nothing parallel: validate
(the input schema), the argument checks (the personal-data guard first), the gate (consent,
blocked, lookup-only policy), dispatch (Live / Mock / Handoff, the same client and parser) and
project (evidence), logged as a turn and stored by the engine's trace writer
(``TurnService.call_adapter``). ``ask`` runs ``TurnService.answer`` — the whole turn, its
grounding and personal-data rules unchanged, as every other surface runs it.

Sessions: consents and the conversation are kept per MCP connection. Over stdio that is one id
for the process (``ummaya mcp --session``, else a fresh ``mcp-…`` id); over HTTP it is the
transport's session id (issued by the server, never chosen by the client), and a request with
none gets a fresh one.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least

from ummaya.model.manifest import Manifest
from ummaya.wire.errors import public_message

from ..callers import caller
from ..request_context import RequestError
from ..events import UPSTREAM_STOPS
from ..service import TurnService
from ..turn import TraceOrigin, TurnRequest
from ..turn.values import CallEnd
from . import elicitation
from .tool_specs import (
    ASK_INPUT,
    ASK_TOOL,
    ask_tool,
    render_consent_required,
    render_error,
    render_result,
    render_turn,
    tool_for,
)

log_ = logging.getLogger("ummaya.mcp")

Mode = Literal["auto", "live", "mock"]
MODERN = "2026-07-28"  # from this version on, elicitation rides InputRequiredResult
SERVER_NAME = "ummaya"
INSTRUCTIONS = (
    "UMMAYA: 한국 공공서비스 요청을 공공데이터로 답합니다. 도구 하나가 어댑터 하나이며, 결과마다 "
    "Live(실시간)/Mock(모의)/Handoff(공식 창구 안내) 표시와 출처가 붙습니다. 개인정보가 필요한 도구는 "
    "동의 없이 실행되지 않습니다(consent_required). 한 번에 처리하려면 `ask`를 쓰세요.\n"
    "UMMAYA answers Korean public-service requests from public data. One tool per adapter; every "
    "result is labelled Live/Mock/Handoff and cited. Tools that need personal data refuse with "
    "consent_required until the citizen consents. Use `ask` to run a whole turn.")


# The session of an adapter call that came with none (stateless HTTP): nothing can name it again,
# so its consent notice does not offer `ummaya consent grant` for it. (`ask` gets a session the
# store issues instead, which the client sends back to continue.)
EPHEMERAL = "mcp-call-"


def new_session_id() -> str:
    return f"mcp-{secrets.token_hex(12)}"


@dataclass
class McpBackend:
    """Where the tools come from. ``service`` returns the turn service to use *now* (the server
    passes the active release's, so a promotion changes the tools at once)."""

    service: Callable[[], TurnService]
    mode: Mode = "auto"
    session_id: str | None = None  # one fixed session (stdio); None: per HTTP session
    _tools: dict[tuple[str, str], list[types.Tool]] = field(default_factory=dict)

    def tools(self, service: TurnService) -> list[types.Tool]:
        key = (service.catalog.release_id, self.mode)
        hit = self._tools.get(key)
        if hit is None:
            hit = [tool_for(m, service.resolve_tier(m.id, self.mode)) for m in
                   (service.catalog.adapters[i] for i in service.catalog.ids)] + [ask_tool()]
            self._tools = {key: hit}  # the previous release's list is never needed again
        return hit

    def session_for(self, ctx: Any, params: Any, service: TurnService) -> str:
        """The consent and conversation session of this call, never one a client made up:
        the fixed one (stdio); the transport's session (HTTP before 2026-07-28 — the SDK issues
        uuid4 ids and refuses unknown ones); the session a consent question was asked in (its
        MAC'd ``requestState``); for ``ask``, a ``session_id`` the server issued to this caller
        (the HTTP API's own rule, ``store.issued_session``) or a newly issued one; else a session
        for this one call. Raises ``SessionNotFound`` for an ``ask`` id the server did not issue."""
        if self.session_id:
            return self.session_id
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        owner = caller_of(ctx)
        sid = headers.get("mcp-session-id") if headers is not None else None
        if sid:
            # The SDK serves a session id only to the API key that opened it (http.py sets the
            # scope's user); the key's fingerprint is in the consent session's name too.
            return f"mcp-http-{_owned(owner, sid)}"
        asked = elicitation.session_from_state(params, elicitation.state_secret(service.store), owner)
        if asked:
            return asked
        store = service.store
        if params.name != ASK_TOOL or store is None or not hasattr(store, "issue_session"):
            return EPHEMERAL + new_session_id()[len("mcp-"):]
        given = (params.arguments or {}).get("session_id")
        if given is None:
            return store.issue_session(owner)
        if isinstance(given, str) and store.issued_session(given, owner):
            return given
        raise SessionNotFound(given)


def caller_of(ctx: Any) -> str | None:
    """The API key fingerprint of an HTTP call (runtime/serve/auth.py); None over stdio or with
    keys off."""
    return caller(getattr(getattr(ctx, "request", None), "scope", None) or {})


def _owned(owner: str | None, sid: str) -> str:
    if not owner:
        return sid
    import hashlib

    return hashlib.sha256(f"{owner}\x00{sid}".encode()).hexdigest()[:32]


class SessionNotFound(Exception):
    """An ``ask`` named a session this server did not issue (to this caller)."""


@dataclass
class Outcome:
    """One run of a tool: the result, and the adapter whose consent stopped it (if any)."""

    result: types.CallToolResult
    consent_for: Manifest | None = None


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]


def error_result(code: str, message: str, **meta: Any) -> types.CallToolResult:
    message = public_message(message)
    return types.CallToolResult(content=text(f"{code}: {message}"), is_error=True,
                                meta={"ummaya/error": code, **{f"ummaya/{k}": v for k, v in meta.items()}})


class ToolRunner:
    def __init__(self, backend: McpBackend):
        self.backend = backend

    # -- one adapter call, through the engine's own stages -----------------------------------------
    async def adapter(self, service: TurnService, m: Manifest, args: dict[str, Any], session_id: str) -> Outcome:
        """The turn's own stages for one call (``TurnService.call_adapter``); only the planner is
        missing: the MCP host proposed the call."""
        blocked: list[Manifest | None] = [None]

        def render(end: CallEnd) -> str:
            body, result, blocked[0] = self._render(m, end)
            outcome.append(result)
            return body

        outcome: list[types.CallToolResult] = []
        # The host is the citizen's agent here: the arguments are what the citizen gave it, so
        # argument provenance reads them as the citizen's words (the guard still decides where
        # personal data may go). Korean first: the request is a tool call, not a sentence.
        await service.call_adapter(m, args, session_id=session_id, mode=self.backend.mode,
                                  request=f"mcp tools/call {m.id}", planner="mcp", render=render,
                                  citizen_texts=[json.dumps(args, ensure_ascii=False)], language="ko",
                                  origin=TraceOrigin("mcp_tool"))
        return Outcome(outcome[0], blocked[0])

    def _render(self, m: Manifest, end: CallEnd) -> tuple[str, types.CallToolResult, Manifest | None]:
        """The MCP result for how the call ended: structured output and a tier-badged, cited text
        when it produced evidence; an ``isError`` result naming the stop otherwise."""
        reason, stop, trace_id, session_id = end.reason, end.stop, end.trace_id, end.session_id
        row = end.calls[-1] if end.calls else {}
        tier = row.get("tier") or "mock"
        meta: dict[str, Any] = {"ummaya/trace_id": trace_id, "ummaya/adapter_id": m.id,
                                "ummaya/tier": tier, "ummaya/status": row.get("status"),
                                "ummaya/citation": m.citation.url}
        if reason == "consent_required":
            body = render_consent_required(m, session_id, trace_id, ephemeral=session_id.startswith(EPHEMERAL))
            return body, types.CallToolResult(content=text(body), is_error=True, meta={
                **meta, "ummaya/error": reason, "ummaya/session_id": session_id,
                "ummaya/notice": _notice(m)}), m
        if end.evidence:
            _, e = end.evidence[-1]
            body = render_result(m, e, trace_id)
            return body, types.CallToolResult(content=text(body), structured_content=end.output,
                                              is_error=False, meta=meta), None
        error = row.get("error") or {}
        if reason in UPSTREAM_STOPS:
            body = render_error(m, tier, reason, error.get("code"), trace_id)
        else:  # invalid_arguments, permission_denied, a guard's refusal
            why = (stop.detail or stop.text) if stop is not None else ""
            body = f"{reason}: {why}\n\ntrace: {trace_id}"
        return body, types.CallToolResult(content=text(body), is_error=True, meta={
            **meta, "ummaya/error": reason, "ummaya/error_code": error.get("code")}), None

    # -- a whole turn --------------------------------------------------------------------------
    async def ask(self, service: TurnService, args: dict[str, Any], session_id: str) -> Outcome:
        from ummaya.wire.schemas import errors as schema_errors

        problems = [f"ask.{'/'.join(map(str, e.absolute_path)) or '(arguments)'}: {e.message}"
                    for e in schema_errors(ASK_INPUT, args)]
        if problems:
            return Outcome(error_result("invalid_arguments", "; ".join(problems)))
        try:
            r = await service.answer(TurnRequest(args["query"], session_id=session_id, mode=self.backend.mode,
                                             policy=args.get("policy"),
                                             context_budget_tokens=args.get("context_tokens"),
                                             origin=TraceOrigin("mcp_ask")))
        except RequestError as exc:
            return Outcome(error_result(exc.code, exc.message))
        structured = {
            "answer": r.answer, "stop_reason": r.stop_reason, "layer": r.layer, "trace_id": r.trace_id,
            "session_id": r.session_id, "language": r.language, "grounded": r.grounded, "evidence": r.evidence,
            "calls": [{k: c.get(k) for k in ("adapter_id", "primitive", "tier", "status")} for c in r.calls],
        }
        result = types.CallToolResult(content=text(render_turn(r)), structured_content=structured,
                                      is_error=False, meta={"ummaya/trace_id": r.trace_id})
        blocked = None
        if r.stop_reason == "consent_required":
            aid = next((e.data["adapter_id"] for e in reversed(r.events)
                        if e.type == "permission" and e.data.get("decision") == "consent_required"), None)
            blocked = service.catalog.adapters.get(aid) if aid else None
        return Outcome(result, blocked)

    # -- the tools/call handler, consent included -------------------------------------------------
    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        service = self.backend.service()
        name, args = params.name, dict(params.arguments or {})
        if name != ASK_TOOL and name not in service.catalog.adapters:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool '{name}' (tools/list names them)")
        try:
            session_id = self.backend.session_for(ctx, params, service)
        except SessionNotFound:
            return error_result("session_not_found", "no such session: session ids are issued by the "
                                "server (omit session_id to start a new conversation) / 그런 세션이 "
                                "없습니다. session_id 없이 보내면 새 대화가 시작됩니다.")
        declined: set[str] = set()
        secret = elicitation.state_secret(service.store)
        owner = caller_of(ctx)
        for adapter_id, ok in elicitation.answers(params, session_id, secret, service.store, owner).items():
            m = service.catalog.adapters.get(adapter_id)
            if m is None or m.permission.consent is None:
                continue
            if ok:
                service.grant(session_id, m)
            else:
                declined.add(adapter_id)

        async def run() -> Outcome:
            if name == ASK_TOOL:
                return await self.ask(service, args, session_id)
            return await self.adapter(service, service.catalog.adapters[name], args, session_id)

        outcome = await run()
        m = outcome.consent_for
        if m is None or m.permission.consent is None:
            return outcome.result
        if m.id in declined:
            return _refused(m, outcome.result)
        if not elicitation.supports_elicitation(ctx.session):
            return outcome.result
        if ctx.protocol_version and is_version_at_least(ctx.protocol_version, MODERN):
            return elicitation.input_required(m, session_id, secret, service.store, owner)
        answer = await ctx.session.elicit_form(message=elicitation.message(m), requested_schema=elicitation.SCHEMA,
                                              related_request_id=ctx.request_id)
        if not elicitation.agreed(answer):
            return _refused(m, outcome.result)
        service.grant(session_id, m)
        return (await run()).result


def _notice(m: Manifest) -> dict[str, Any]:
    c = m.permission.consent
    if c is None:
        return {}
    return {"purpose": c.purpose.model_dump(), "data_items": list(c.data_items),
            "retention": c.retention.model_dump(), "refusal": c.refusal.model_dump()}


def _refused(m: Manifest, stopped: types.CallToolResult) -> types.CallToolResult:
    """The citizen refused: nothing ran. An adapter call stays an error naming consent_required;
    a turn keeps its answer (which already says nothing was run) under the refusal note."""
    c = m.permission.consent
    note = ("동의하지 않아 실행하지 않았습니다. / Not run: consent was refused.\n"
            + (f"{c.refusal.ko} / {c.refusal.en}" if c is not None else ""))
    first = stopped.content[0].text if stopped.content and isinstance(stopped.content[0], types.TextContent) else ""
    return stopped.model_copy(update={"content": text(f"{note}\n\n{first}"),
                                      "meta": {**(stopped.meta or {}), "ummaya/consent": "refused"}})


def build_server(backend: McpBackend) -> Server[Any]:
    runner = ToolRunner(backend)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=backend.tools(backend.service()))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await runner.call(ctx, params)

    def input_schema(name: str) -> dict[str, Any] | None:
        service = backend.service()
        if name == ASK_TOOL:
            return ask_tool().input_schema
        m = service.catalog.adapters.get(name)
        return m.input_schema if m is not None else None

    from importlib.metadata import version

    return Server(SERVER_NAME, version=version("ummaya"), title="UMMAYA",
                  description="Korean public-service outcomes, grounded in public data (Live/Mock/Handoff)",
                  instructions=INSTRUCTIONS, get_tool_input_schema=input_schema,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio(backend: McpBackend) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(backend)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
