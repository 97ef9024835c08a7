"""Write the answer from evidence only, after the tools, in the request's language.

Every answer states what was found, from which agency (with the citation), how fresh, the
boundary (Live / Mock / Handoff) and the next action — or, when a turn stops, why and what the
citizen can do. Each manifest's ``render`` template phrases its own evidence; templates run in a
sandbox over data, so upstream text can never execute anything.
"""

from __future__ import annotations

import logging
from typing import Any

from ummaya.codegen.manifest import Manifest
from ummaya.codegen.templates import has_content as _has_content
from ummaya.codegen.templates import render as render_template

from .plan.base import Evidence

log = logging.getLogger(__name__)

BADGE = {
    "ko": {"live": "[Live · 실시간]", "mock": "[Mock · 모의]", "handoff": "[Handoff · 공식 창구 안내]"},
    "en": {"live": "[Live]", "mock": "[Mock]", "handoff": "[Handoff · official channel]"},
}
BOUNDARY = {
    "ko": {
        "live": "공공데이터 API를 실시간으로 조회한 결과입니다.",
        "mock": "⚠️ 모의(Mock) 응답입니다: 실제 기관 시스템에 연결하지 않은 예시 데이터이며 요청한 조건과 다를 수 있습니다. 실제로 조회·처리·제출된 것은 없습니다.",
        "handoff": "UMMAYA는 이 절차를 대신 처리할 수 없습니다. 아래 공식 창구에서 직접 진행해 주세요.",
    },
    "en": {
        "live": "This is a live result from the public data API.",
        "mock": "⚠️ Mock response: example data, not connected to the agency's system, and it may not match your request; nothing was actually looked up, processed or submitted.",
        "handoff": "UMMAYA cannot complete this for you. Please use the official channel below.",
    },
}
NEXT_STEP = {
    "ko": {
        "health": "응급 상황이면 바로 119에 전화하세요. 방문 전 전화로 진료 가능 여부를 확인하세요.",
        "default": "방문하거나 이용하기 전에 해당 기관에 최신 정보를 확인하세요.",
        "mock": "실제 처리는 공식 창구에서 본인이 직접 진행해야 합니다.",
        "mock_lookup": "실시간 정보는 API 키를 설정한 뒤 --mode live로 다시 확인하세요.",
    },
    "en": {
        "health": "In an emergency call 119 now. Call ahead to confirm they can see you.",
        "default": "Check the latest details with the agency before you go.",
        "mock": "The real procedure must be done by you through the official channel.",
        "mock_lookup": "For real-time data, configure the API key and ask again with --mode live.",
    },
}
ASK = {
    "ko": {
        "place": "어느 위치를 기준으로 찾을까요? 동네 이름이나 건물·역 이름(예: 부산역, 동아대 승학캠퍼스)을 알려주세요.",
        "date": "언제 기준인가요? (예: 오늘, 내일, 이번 주말)",
        "time": "몇 시 기준인가요?",
        "drug_name": "어떤 약인가요? 제품 이름을 알려주세요.",
        "stop_name": "어느 정류장인가요? 정류장 이름을 알려주세요.",
        "sido_name": "어느 지역(시·도)인가요? (예: 서울, 부산)",
        "city_code": "어느 도시인가요? (예: 부산, 대전)",
        "region_name": "어느 지역인가요?",
        "keyword": "무엇을 찾을지 조금 더 구체적으로 알려주세요.",
        "request": "무엇을 도와드릴까요? 필요한 공공서비스를 조금 더 구체적으로 알려주세요.",
        "person_name": "본인 이름을 알려주세요.",
        "birth_date": "생년월일을 알려주세요 (예: 1990-01-01).",
        "phone": "휴대전화 번호를 알려주세요.",
        "vehicle_number": "차량 번호를 알려주세요 (예: 12가3456).",
        "year": "몇 년도 기준인가요?",
        "region_code": "어느 지역(시·군·구)인가요?",
        "default": "다음 정보가 필요합니다: {slots}",
    },
    "en": {
        "place": "Near which place? Tell me a neighbourhood, building or station (e.g. Busan Station).",
        "date": "For which day? (e.g. today, tomorrow, this weekend)",
        "time": "For what time?",
        "drug_name": "Which medicine? Please give the product name.",
        "stop_name": "Which bus stop? Please give its name.",
        "sido_name": "Which city or province? (e.g. Seoul, Busan)",
        "city_code": "Which city? (e.g. Busan, Daejeon)",
        "region_name": "Which region?",
        "keyword": "Could you say a little more specifically what to look for?",
        "request": "What can I help with? Please say which public service you need.",
        "person_name": "Please tell me your name.",
        "birth_date": "Please tell me your date of birth (e.g. 1990-01-01).",
        "phone": "Please tell me your mobile number.",
        "vehicle_number": "Please tell me the vehicle number (e.g. 12가3456).",
        "year": "For which year?",
        "region_code": "Which city, county or district?",
        "default": "I need the following to continue: {slots}",
    },
}
STOPPED = {
    "ko": {
        "no_adapter": "이 요청을 처리할 수 있는 공공서비스를 찾지 못했습니다. UMMAYA는 응급실·약국·날씨·대기질·주소·복지·교통 등 공공서비스 요청을 도와드립니다.",
        "invalid_arguments": "요청에서 필요한 값을 올바르게 만들지 못해 조회하지 않았습니다: {detail}",
        "permission_denied": "이 작업은 허용되지 않아 실행하지 않았습니다.",
        "credential_missing": "실시간 조회에 필요한 인증 정보가 없거나 거부되었습니다 ({detail}). 관리자에게 API 키 설정을 요청하거나 --mode mock으로 모의 응답을 확인하세요.",
        "channel_unavailable": "공공 API가 지금 응답하지 않습니다 ({detail}). 잠시 후 다시 시도해 주세요.",
        "adapter_error": "공공 API 응답을 처리하지 못했습니다 ({detail}). 결과를 추측해서 알려드리지 않습니다.",
        "budget_exhausted": "허용된 단계 수 안에 답을 만들지 못해 멈췄습니다.",
        "ungrounded": "공공데이터 조회 결과로 뒷받침되는 답을 만들지 못해 답하지 않았습니다. 근거 없는 내용을 추측해서 알려드리지 않습니다. 찾으시는 위치나 조건을 조금 더 구체적으로 알려주시면 공공데이터로 확인해 드릴게요.",
        "model_unavailable": "답변을 만드는 언어 모델 서버가 지금 응답하지 않습니다 ({detail}). 잠시 후 다시 시도하거나 내장 오프라인 플래너(--planner offline)를 사용하세요.",
        "no_data": "조회 결과가 없습니다.",
    },
    "en": {
        "no_adapter": "I could not find a public service that handles this request. UMMAYA helps with public-service requests such as emergency rooms, pharmacies, weather, air quality, addresses, welfare and transport.",
        "invalid_arguments": "I could not build valid arguments from the request, so nothing was looked up: {detail}",
        "permission_denied": "This action is not permitted, so it was not run.",
        "credential_missing": "Live access needs a credential that is missing or was refused ({detail}). Ask the operator to configure the API key, or use --mode mock to see a labelled mock answer.",
        "channel_unavailable": "The public API is not responding right now ({detail}). Please try again shortly.",
        "adapter_error": "The public API's response could not be processed ({detail}). I will not guess a result.",
        "budget_exhausted": "Stopped: no answer within the allowed number of steps.",
        "ungrounded": "I could not write an answer backed by public data, so I did not answer; I will not guess. Tell me a little more (for example where you are) and I will look it up.",
        "model_unavailable": "The language model server that writes answers is not responding ({detail}). Try again shortly, or use the embedded offline planner (--planner offline).",
        "no_data": "No results were found.",
    },
}


def render_evidence(m: Manifest, ev: Evidence, language: str) -> str:
    """The citizen's view of one result, from the adapter's full output (the model's view, the
    evidence summary, is trimmed to the context budget: a count rendered from it would be wrong)."""
    data = ev.output if ev.output is not None else ev.summary
    if ev.status == "no_data" or (ev.status == "ok" and not _has_content(data)):
        return STOPPED[language]["no_data"]
    if m.render is not None:
        try:
            return render_template(getattr(m.render, language), data)
        except Exception as exc:  # noqa: BLE001 - never fail the answer over its phrasing
            # The build rendered every template against every fixture (codegen/templates.py), so
            # this is data no fixture had: said in the log, answered with the plain listing.
            log.warning("answer template of %s (%s) failed: %s: %s", m.id, language, type(exc).__name__, exc)
    return _plain(ev.summary)


def _plain(summary: dict[str, Any]) -> str:
    items = summary.get("items")
    rows = items if isinstance(items, list) else [summary]
    out = []
    for i, row in enumerate(rows, 1):
        if isinstance(row, dict):
            out.append(f"{i}. " + ", ".join(f"{k}: {v}" for k, v in row.items() if v not in (None, "")))
    return "\n".join(out)


def header(m: Manifest, ev: Evidence, language: str) -> str:
    title = m.title.ko if language == "ko" else m.title.en
    agency = m.agency.name_ko if language == "ko" else m.agency.name_en
    return f"{BADGE[language][ev.tier]} {agency} · {title}"


def source_line(ev: Evidence, language: str) -> str:
    c = ev.citation
    parts = [("출처: " if language == "ko" else "Source: ") + f"{c['title']} ({c['url']})"]
    if ev.freshness:
        parts.append(("기준 시각: " if language == "ko" else "As of: ") + ev.freshness)
    return " · ".join(parts)


def compose_completed(evidence: list[tuple[Manifest, Evidence]], language: str) -> str:
    """The engine's own answer: each result rendered under its tier label, with its source."""
    blocks = []
    for m, ev in evidence:
        if m.primitive == "locate" and len(evidence) > 1:
            blocks.append(_located_line(ev, language))
            continue
        blocks.append("\n".join([header(m, ev, language), render_evidence(m, ev, language), source_line(ev, language)]))
    return "\n\n".join([*blocks, *frame_tail(evidence, language)])


def compose_framed(evidence: list[tuple[Manifest, Evidence]], prose: str, language: str) -> str:
    """A planner's prose inside the engine's frame: a tier label for each piece of evidence first,
    the prose, then each source, the boundary (what was and was not done) and the next step. The
    prose cannot remove or reword any of them."""
    labels = [_located_line(ev, language) if m.primitive == "locate" and len(evidence) > 1 else header(m, ev, language)
              for m, ev in evidence]
    sources = list(dict.fromkeys(source_line(ev, language) for _, ev in evidence))
    return "\n\n".join(["\n".join(labels), prose.strip(), "\n".join(sources), *frame_tail(evidence, language)])


def frame_tail(evidence: list[tuple[Manifest, Evidence]], language: str) -> list[str]:
    """The boundary for the tiers used and the next step for the last result."""
    tier = "mock" if any(ev.tier == "mock" for _, ev in evidence) else "live"
    final = evidence[-1][0]
    nxt = NEXT_STEP[language]
    step = nxt.get(final.domain, nxt["default"])
    if tier == "mock":
        step = nxt["mock"] if final.primitive in ("check", "send") else f"{step} {nxt['mock_lookup']}"
    return [BOUNDARY[language][tier], ("다음 단계: " if language == "ko" else "Next: ") + step]


def _located_line(ev: Evidence, language: str) -> str:
    items = ev.summary.get("items") or [ev.summary]
    first = items[0] if items and isinstance(items[0], dict) else {}
    name = first.get("place_name") or first.get("name") or first.get("address_name") or first.get("road_address") or ""
    addr = first.get("road_address") or first.get("address") or first.get("address_name") or ""
    badge = BADGE[language][ev.tier]
    label = "기준 위치" if language == "ko" else "Location used"
    where = f"{name} ({addr})" if addr and addr != name else str(name)
    return f"{badge} {label}: {where}"


def compose_handoff(m: Manifest, language: str) -> str:
    h = m.handoff
    assert h is not None
    lang = language
    lines = [f"{BADGE[lang]['handoff']} {getattr(m.title, lang)}", BOUNDARY[lang]["handoff"], ""]
    lines.append(("공식 창구: " if lang == "ko" else "Official channel: ") + f"{getattr(h.channel, lang)} — {h.url}")
    steps = getattr(h.steps, lang)
    if steps:
        lines.append("절차:" if lang == "ko" else "Steps:")
        lines += [f"  {i}. {s}" for i, s in enumerate(steps, 1)]
    docs = getattr(h.documents, lang)
    if docs:
        lines.append(("준비물: " if lang == "ko" else "Bring: ") + ", ".join(docs))
    if h.deadline:
        lines.append(("기한: " if lang == "ko" else "Deadline: ") + getattr(h.deadline, lang))
    if h.offline:
        lines.append(("방문: " if lang == "ko" else "In person: ") + getattr(h.offline, lang))
    if h.phone:
        lines.append(("문의: " if lang == "ko" else "Phone: ") + h.phone)
    lines.append(("근거: " if lang == "ko" else "Basis: ") + f"{m.citation.title} ({m.citation.url})" + (f" · {m.citation.basis}" if m.citation.basis else ""))
    return "\n".join(lines)


def compose_consent(m: Manifest, language: str) -> str:
    c = m.permission.consent
    assert c is not None
    lang = language
    if lang == "ko":
        return "\n".join([
            f"'{m.title.ko}'을(를) 진행하려면 개인정보 수집·이용 동의가 필요합니다 (개인정보 보호법 제15조·제22조). 동의 없이는 실행하지 않았습니다.",
            f"  · 목적: {c.purpose.ko}",
            f"  · 수집 항목: {', '.join(c.data_items)}",
            f"  · 보유 기간: {c.retention.ko}",
            f"  · 거부할 권리: {c.refusal.ko}",
            f"동의하시면 동의를 기록한 뒤 같은 요청을 다시 보내 주세요 (웹 화면의 동의 버튼, 명령줄의 `--consent {m.id}`, 또는 chat의 동의 질문).",
        ])
    return "\n".join([
        f"'{m.title.en}' needs your consent to collect and use personal data (Personal Information Protection Act, Articles 15 and 22). Nothing was run without it.",
        f"  · Purpose: {c.purpose.en}",
        f"  · Data collected: {', '.join(c.data_items)}",
        f"  · Retention: {c.retention.en}",
        f"  · Right to refuse: {c.refusal.en}",
        f"To consent, record your consent and send the request again (the consent button on the web page, `--consent {m.id}` on the command line, or the consent question in chat).",
    ])


def compose_declined(language: str) -> str:
    """The citizen said no to the engine's question: nothing was run, and nothing is pending."""
    if language == "ko":
        return "알겠습니다. 진행하지 않았고, 아무것도 조회하거나 제출하지 않았습니다. 다른 도움이 필요하시면 말씀해 주세요."
    return "All right: I did not go ahead, and nothing was looked up or submitted. Tell me if you need something else."


def compose_ack(language: str) -> str:
    """Thanks or an acknowledgement: nothing to look up, nothing run again."""
    if language == "ko":
        return "네, 더 필요한 공공서비스가 있으면 말씀해 주세요."
    return "You're welcome. Tell me if you need another public service."


def compose_ask(missing: list[str], language: str) -> str:
    table = ASK[language]
    known = [table[s] for s in missing if s in table]
    if known:
        return " ".join(dict.fromkeys(known))
    return table["default"].format(slots=", ".join(missing))


def compose_stop(reason: str, language: str, detail: str = "") -> str:
    return STOPPED[language][reason].format(detail=detail or "-")


def compose_lookup_only(m: Manifest, language: str) -> str:
    """The session is in look-up-only mode: a protected step (sign-in, check, submission) is not
    started, and the citizen is told where to do it themselves."""
    if language == "ko":
        return (f"이 대화는 조회 전용 모드(lookup_only)라서 '{m.title.ko}'처럼 본인 확인·신청·제출이 "
                "필요한 단계는 진행하지 않았습니다. 공개된 정보 조회만 도와드립니다. 직접 진행하시려면 "
                "공식 창구를 이용하거나 조회 전용 모드를 끄고(--policy default) 다시 요청해 주세요.")
    return (f"This conversation is in look-up-only mode (lookup_only), so '{m.title.en}' — a step that "
            "needs identity checks, applications or submissions — was not started. Only public "
            "look-ups are done. Use the official channel, or ask again with --policy default.")
