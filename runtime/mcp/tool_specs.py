"""Manifests as MCP tools, and results as the text an MCP host shows.

One tool per adapter: name = adapter id, title and description in Korean and English, the
manifest's input and output schemas as they are, and annotations derived from the primitive and
the permission gate (the table in ``annotations_for``). The ``ask`` tool runs a whole turn.

Every text rendering starts with the tier badge (``[Live · 실시간]``, ``[Mock · 모의]``,
``[Handoff · 공식 창구 안내]``) and carries the citation, so a host that shows only text still
shows what the structured content is and where it came from.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from ummaya.model.manifest import Manifest

from .. import compose as ans
from ..events import STOP_REASONS
from ..plan.protocol import Evidence

ASK_TOOL = "ask"
TIER_LABEL = {"live": "Live", "mock": "Mock", "handoff": "Handoff"}
TIER_NOTE = {
    "live": "실시간 공공데이터 API / live public data API",
    "mock": "모의 — 실제 기관 시스템에 연결하지 않은 예시 데이터 / example data, not the agency's system",
    "handoff": "공식 창구 안내 — UMMAYA는 대신 처리하지 않습니다 / official channel; UMMAYA does not do it for you",
}
# Gates whose action cannot be taken back once done: a payment, a submission, a signature.
IRREVERSIBLE_GATES = frozenset({"action", "send", "sign"})


def needs_consent(m: Manifest) -> bool:
    """The gate asks for consent before this adapter runs (the engine's ``gate.decide`` rule)."""
    return m.permission.gate not in ("read-only", "blocked") and m.tier != "handoff"


def annotations_for(m: Manifest, tier: str) -> types.ToolAnnotations:
    """Hints from the primitive and the gate.

    ============  ========  ===========  ==========  =========================================
    primitive     readOnly  destructive  idempotent  note
    ============  ========  ===========  ==========  =========================================
    locate, find  true      false        true        public lookups
    check         true      false        true        reads, but consent-gated (see ``_meta``)
    send          false     gate ∈ {action, send, sign}, except Handoff: UMMAYA submits
                                         nothing there, the citizen does at the official channel
    ============  ========  ===========  ==========  =========================================

    ``openWorldHint`` is true only when the tool really reaches an agency (the tier the dispatcher
    resolves to is Live); Mock answers from recorded fixtures and Handoff returns channel material.
    """
    title = f"{m.title.ko} · {m.title.en}"
    if m.primitive in ("locate", "find", "check"):
        return types.ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False,
                                     idempotent_hint=True, open_world_hint=tier == "live")
    return types.ToolAnnotations(
        title=title, read_only_hint=False,
        destructive_hint=m.permission.gate in IRREVERSIBLE_GATES and tier != "handoff",
        idempotent_hint=False, open_world_hint=tier == "live")


def description_for(m: Manifest, tier: str) -> str:
    lines = [m.summary.ko, m.summary.en, "",
             f"등급 Tier: {TIER_LABEL[tier]} ({TIER_NOTE[tier]})",
             f"기관 Agency: {m.agency.name_ko} ({m.agency.name_en})",
             f"출처 Citation: {m.citation.title} — {m.citation.url}"]
    c = m.permission.consent
    if needs_consent(m) and c is not None:
        lines += ["",
                  "동의 필요 Consent required (개인정보 보호법 제15조·제22조): the call is refused with "
                  "`consent_required` until the citizen consents; hosts with elicitation are asked.",
                  f"  목적 Purpose: {c.purpose.ko} / {c.purpose.en}",
                  f"  항목 Data items: {', '.join(c.data_items)}",
                  f"  보유 Retention: {c.retention.ko} / {c.retention.en}",
                  f"  거부 Right to refuse: {c.refusal.ko} / {c.refusal.en}"]
    if m.permission.gate == "blocked":
        lines += ["", "차단됨 Blocked: this action is never run (permission_denied)."]
    return "\n".join(lines)


def tool_for(m: Manifest, tier: str) -> types.Tool:
    return types.Tool(
        name=m.id,
        title=f"{m.title.ko} · {m.title.en}",
        description=description_for(m, tier),
        input_schema=m.input_schema,
        output_schema=m.output_schema,
        annotations=annotations_for(m, tier),
        meta={"ummaya/primitive": m.primitive, "ummaya/tier": tier, "ummaya/gate": m.permission.gate,
              "ummaya/consent_required": needs_consent(m), "ummaya/agency": m.agency.code,
              "ummaya/version": m.version, "ummaya/citation": m.citation.url},
    )


ASK_INPUT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 2000,
                  "description": "시민의 요청 그대로 (한국어 또는 영어) / the citizen's request as said, "
                                 "e.g. 동아대 승학캠퍼스 근처 응급실 알려줘"},
        "session_id": {"type": "string", "maxLength": 80,
                       "description": "이전 ask 결과의 session_id (대화를 이어갈 때) / the session_id an "
                                      "earlier ask returned, to continue that conversation where the "
                                      "transport keeps none (stateless HTTP). Omit it to start one; "
                                      "an id this server did not issue is refused (session_not_found)"},
        "policy": {"enum": ["default", "lookup_only"],
                   "description": "세션 정책 (lookup_only: 보호된 확인·신청으로 넘어가지 않음) / the "
                                  "session's policy mode, as the HTTP API's `policy`: lookup_only "
                                  "never goes on into a protected check or submission (default: the "
                                  "session's current mode, else default)"},
        "context_tokens": {"type": "integer", "minimum": 256, "maximum": 10000000,
                           "description": "모델 문맥 크기(토큰) / the planning model's context in tokens: the "
                                          "whole prompt plus the reply must fit (default: the server's)"},
    },
}
_EVIDENCE = {
    "type": "object",
    "required": ["evidence_id", "adapter_id", "tier", "status", "citation"],
    "properties": {
        "evidence_id": {"type": "string"}, "adapter_id": {"type": "string"},
        "tier": {"enum": ["live", "mock", "handoff"]}, "status": {"type": "string"},
        "citation": {"type": "object"}, "freshness": {"type": ["string", "null"]},
        "summary": {"type": "object"},
    },
}


def ask_output_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["answer", "stop_reason", "layer", "trace_id", "session_id", "evidence", "calls"],
        "properties": {
            "answer": {"type": "string"},
            "stop_reason": {"enum": list(STOP_REASONS)},
            "layer": {"type": "string"},
            "trace_id": {"type": "string"},
            "session_id": {"type": "string"},
            "language": {"type": "string"},
            "grounded": {"type": "boolean", "description": "every claim in the answer traces to the evidence"},
            "evidence": {"type": "array", "items": _EVIDENCE},
            "calls": {"type": "array", "items": {
                "type": "object", "required": ["adapter_id", "tier", "status"],
                "properties": {"adapter_id": {"type": "string"}, "primitive": {"type": ["string", "null"]},
                               "tier": {"type": "string"}, "status": {"type": "string"}}}},
        },
    }


def ask_tool() -> types.Tool:
    return types.Tool(
        name=ASK_TOOL,
        title="UMMAYA에 묻기 · Ask UMMAYA",
        description=(
            "공공서비스 요청 하나를 처음부터 끝까지 처리합니다 (검색 → 계획 → 검증 → 동의 확인 → 호출 → 답변). "
            "답변은 근거(evidence)로만 쓰이며 Live/Mock/Handoff 표시와 출처가 붙습니다. 같은 연결 안에서는 "
            "대화가 이어집니다.\n"
            "Runs one whole turn for a Korean public-service request (retrieve → plan → validate → "
            "consent gate → dispatch → answer) and returns the answer, the stop reason, the evidence "
            "(each labelled Live/Mock/Handoff with its citation) and the trace id. Follow-ups in the "
            "same connection continue the conversation."),
        input_schema=ASK_INPUT,
        output_schema=ask_output_schema(),
        annotations=types.ToolAnnotations(title="UMMAYA에 묻기 · Ask UMMAYA", read_only_hint=False,
                                          destructive_hint=False, idempotent_hint=False,
                                          open_world_hint=True),
        meta={"ummaya/kind": "turn"},
    )


# -- text renderings ---------------------------------------------------------------------------

def render_result(m: Manifest, ev: Evidence, trace_id: str, language: str = "ko") -> str:
    """The evidence as the citizen would read it: badge, agency and title, the result, the
    source (citation) and the boundary sentence for the tier."""
    if ev.status == "handoff":
        body = ans.compose_handoff(m, language)
    else:
        body = "\n".join([ans.header(m, ev, language), ans.render_evidence(m, ev, language),
                          ans.source_line(ev, language), "", ans.BOUNDARY[language][ev.tier]])
    return f"{body}\n\ntrace: {trace_id}"


def render_error(m: Manifest, tier: str, error_class: str, code: str | None, trace_id: str) -> str:
    reason = error_class if error_class in ans.STOPPED["ko"] else "adapter_error"
    return (f"{ans.BADGE['ko'][tier]} {m.agency.name_ko} · {m.title.ko}\n"
            f"{reason}: {ans.compose_stop(reason, 'ko', code or '')}\n"
            f"{reason}: {ans.compose_stop(reason, 'en', code or '')}\n"
            f"출처 Source: {m.citation.title} ({m.citation.url})\n\ntrace: {trace_id}")


def render_consent_required(m: Manifest, session_id: str, trace_id: str | None = None, *,
                            ephemeral: bool = False) -> str:
    """``consent_required`` with the four notice items and how to consent without elicitation."""
    c = m.permission.consent
    parts = [f"consent_required: {m.id}", ans.compose_consent(m, "ko"), "", ans.compose_consent(m, "en")]
    if c is not None and ephemeral:
        parts += ["",
                  "이 연결은 세션을 유지하지 않고(stateless HTTP) 동의 창(elicitation)도 없어 여기서는 동의할 수 "
                  "없습니다. 동의 창을 지원하는 클라이언트나 `ummaya mcp --session ID`(stdio)를 쓰세요. / "
                  "This connection keeps no session and cannot show a consent form, so consent cannot be "
                  "given here: use a client with elicitation, or `ummaya mcp --session ID` over stdio."]
    elif c is not None:
        parts += ["",
                  "이 MCP 클라이언트는 동의 창(elicitation)을 지원하지 않습니다. 동의하려면 터미널에서 / "
                  "This MCP client cannot show a consent form (no elicitation). To consent, run:",
                  f"  ummaya consent grant {m.id} --session {session_id}",
                  "그리고 같은 요청을 다시 보내세요 / then send the same call again."]
    if trace_id:
        parts += ["", f"trace: {trace_id}"]
    return "\n".join(parts)


def render_turn(result: Any) -> str:
    tiers = sorted({c.get("tier") for c in result.calls if c.get("tier")})
    chain = " → ".join(f"{c['adapter_id']} [{TIER_LABEL.get(c.get('tier'), c.get('tier'))}: {c['status']}]"
                       for c in result.calls) or "-"
    return (f"{result.answer}\n\n"
            f"stop: {result.stop_reason} ({result.layer}) · calls: {chain} · "
            f"tiers: {', '.join(TIER_LABEL.get(t, t) for t in tiers) or '-'} · trace: {result.trace_id}")
