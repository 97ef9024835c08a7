"""Write the answer from evidence only, after the tools, in the request's language.

Every answer states what was found, from which agency (with the citation), how fresh, the
boundary (Live / Mock / Handoff) and the next action — or, when a turn stops, why and what the
citizen can do. Each manifest's ``render`` template phrases its own evidence; templates run in a
sandbox over data, so upstream text can never execute anything.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass
from typing import Any

from ummaya.model.manifest import Manifest
from ummaya.model.templates import has_content as _has_content
from ummaya.model.templates import render as render_template

from .plan.protocol import Evidence

log = logging.getLogger(__name__)


@dataclass
class Part:
    """One piece of an answer, for a surface that lays the answer out (the page puts ``evidence``
    text into its card, ``located`` on one line, the rest around the cards). The answer text is
    the parts in order, each followed by its ``after`` (a blank line; one line break inside a
    result's label, body and source), so every surface reads the same words.

    Kinds: emergency, limit, note, located, label, evidence, source, prose, boundary, next,
    question, way_out, consent, handoff, stop."""

    kind: str
    text: str
    evidence_id: str | None = None
    after: str = "\n\n"


def text_of(parts: list[Part]) -> str:
    """The answer text the parts make (no separator after the last one)."""
    kept = [p for p in parts if p.text]
    return "".join(p.text + (p.after if i < len(kept) - 1 else "") for i, p in enumerate(kept))


BADGE = {
    "ko": {"live": "[Live · 실시간]", "mock": "[Mock · 모의]", "handoff": "[Handoff · 공식 창구 안내]"},
    "en": {"live": "[Live]", "mock": "[Mock]", "handoff": "[Handoff · official channel]"},
}
BOUNDARY = {
    "ko": {
        "live": "공공데이터 API를 실시간으로 조회한 결과입니다.",
        "mock": "⚠️ 모의 데이터: 실제 기관 시스템에 연결하지 않은 예시 데이터이며 요청한 조건과 다를 수 있습니다. 실제로 조회·처리·제출된 것은 없습니다.",
        "handoff": "UMMAYA는 이 절차를 대신 처리할 수 없습니다. 아래 공식 창구에서 직접 진행해 주세요.",
    },
    "en": {
        "live": "This is a live result from the public data API.",
        "mock": "⚠️ Mock data: example data, not connected to the agency's system, and it may not match your request; nothing was actually looked up, processed or submitted.",
        "handoff": "UMMAYA cannot complete this for you. Please use the official channel below.",
    },
}
NEXT_STEP = {
    "ko": {
        "health": "응급 상황이면 바로 119에 전화하세요. 방문 전 전화로 진료 가능 여부를 확인하세요.",
        "default": "방문하거나 이용하기 전에 해당 기관에 최신 정보를 확인하세요.",
        "mock": "실제 처리는 공식 창구에서 본인이 직접 진행해야 합니다.",
        "mock_lookup": "모의 데이터이므로 실제 상황은 해당 기관에 꼭 확인하세요.",
    },
    "en": {
        "health": "In an emergency call 119 now. Call ahead to confirm they can see you.",
        "default": "Check the latest details with the agency before you go.",
        "mock": "The real procedure must be done by you through the official channel.",
        "mock_lookup": "This is mock data: check the real situation with the agency.",
    },
}
# What the engine asks when a required field is missing is the slot type's own question
# (registry/_slots/*.yaml ``question``, compiled into generated/understand/slots.json): these two
# are the engine's words for what no slot type says — a request too vague to pick a service, and
# slots no question names.
ASK = {
    "ko": {
        "request": "무엇을 도와드릴까요? 필요한 공공서비스를 조금 더 구체적으로 알려주세요.",
        "default": "다음 정보가 필요합니다: {slots}",
    },
    "en": {
        "request": "What can I help with? Please say which public service you need.",
        "default": "I need the following to continue: {slots}",
    },
}
STOPPED = {
    "ko": {
        "no_adapter": "이 요청을 처리할 수 있는 공공서비스를 찾지 못했습니다. UMMAYA는 응급실·약국·날씨·대기질·주소·복지·교통 등 공공서비스 요청을 도와드립니다.",
        "invalid_arguments": "요청에서 필요한 값을 올바르게 만들지 못해 조회하지 않았습니다: {detail}",
        "permission_denied": "이 작업은 허용되지 않아 실행하지 않았습니다.",
        "credential_missing": "이 서비스의 실시간 조회에 필요한 기관 인증이 준비되어 있지 않아 조회하지 못했습니다 ({detail}). 결과를 추측해서 알려드리지 않습니다. 해당 기관 누리집에서 직접 확인해 주세요.",
        "channel_unavailable": "공공 API가 지금 응답하지 않습니다 ({detail}). 잠시 후 다시 시도해 주세요.",
        "adapter_error": "공공 API 응답을 처리하지 못했습니다 ({detail}). 결과를 추측해서 알려드리지 않습니다.",
        "budget_exhausted": "허용된 단계 수 안에 답을 만들지 못해 멈췄습니다.",
        "ungrounded": "공공데이터 조회 결과로 뒷받침되는 답을 만들지 못해 답하지 않았습니다. 근거 없는 내용을 추측해서 알려드리지 않습니다. 찾으시는 위치나 조건을 조금 더 구체적으로 알려주시면 공공데이터로 확인해 드릴게요.",
        "model_unavailable": "답변을 만드는 언어 모델 서버가 지금 응답하지 않습니다 ({detail}). 잠시 후 다시 시도해 주세요.",
        "guessed_arguments": "언어 모델이 {detail} 값을 이 대화의 근거 없이 추측해서 보냈기 때문에 조회하지 않았습니다 (추측한 위치로 찾으면 엉뚱한 곳의 결과가 나옵니다). 찾을 장소를 알려 주시면 그 위치를 먼저 확인해서 찾아 드릴게요.",
        "model_bad_reply": "언어 모델이 쓸 수 있는 답을 보내지 않았습니다 ({detail}). 서버는 응답했지만 답이 비었거나 잘렸거나 형식이 맞지 않습니다. 잠시 후 다시 시도해 주세요.",
        "model_timeout": "언어 모델이 제한 시간 안에 답하지 않았습니다 ({detail}). 잠시 후 다시 시도해 주세요.",
        "model_capability": "언어 모델 서버가 이 요청을 처리할 수 없습니다 ({detail}). 서비스 운영자에게 알려 주세요.",
        "model_auth": "언어 모델 서버가 요청을 거부했습니다 ({detail}). 서비스 운영자에게 알려 주세요.",
        "no_data": "조회 결과가 없습니다.",
    },
    "en": {
        "no_adapter": "I could not find a public service that handles this request. UMMAYA helps with public-service requests such as emergency rooms, pharmacies, weather, air quality, addresses, welfare and transport.",
        "invalid_arguments": "I could not build valid arguments from the request, so nothing was looked up: {detail}",
        "permission_denied": "This action is not permitted, so it was not run.",
        "credential_missing": "The live connection to this service is not set up, so nothing was looked up ({detail}). I will not guess a result; please check the agency's own website.",
        "channel_unavailable": "The public API is not responding right now ({detail}). Please try again shortly.",
        "adapter_error": "The public API's response could not be processed ({detail}). I will not guess a result.",
        "budget_exhausted": "Stopped: no answer within the allowed number of steps.",
        "ungrounded": "I could not write an answer backed by public data, so I did not answer; I will not guess. Tell me a little more (for example where you are) and I will look it up.",
        "model_unavailable": "The language model server that writes answers is not responding ({detail}). Please try again shortly.",
        "guessed_arguments": "The language model guessed the {detail} instead of taking it from this conversation, so nothing was looked up (a guessed location gives results for the wrong place). Tell me the place and I will locate it first.",
        "model_bad_reply": "The language model sent no usable reply ({detail}): the server answered, but the reply was empty, cut off or malformed. Please try again shortly.",
        "model_timeout": "The language model did not answer in time ({detail}). Please try again shortly.",
        "model_capability": "The language model server cannot handle this request ({detail}). Please tell the service's operator.",
        "model_auth": "The language model server refused the request ({detail}). Please tell the service's operator.",
        "no_data": "No results were found.",
    },
}


def render_evidence(m: Manifest, ev: Evidence, language: str) -> str:
    """The citizen's view of one result, from the adapter's full output (the model's view, the
    evidence summary, is trimmed to the context budget: a count rendered from it would be wrong)."""
    data = ev.output if ev.output is not None else ev.summary
    if ev.status == "no_data" or (ev.status == "ok" and not _has_content(data)):
        # The template's own words for an empty result (「이 기간에는 공휴일이 없습니다」) when it has
        # them: the build rendered it against every fixture, empty ones included.
        if m.render is not None and isinstance(data, dict):
            try:
                text = render_template(getattr(m.render, language), data).strip()
                if text:
                    return text
            except Exception:  # noqa: BLE001 - the generic words below
                pass
        return STOPPED[language]["no_data"]
    if m.render is not None:
        try:
            return render_template(getattr(m.render, language), data)
        except Exception as exc:  # noqa: BLE001 - never fail the answer over its phrasing
            # The build rendered every template against every fixture (model/templates.py), so
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
    """The agency in plain words and the data set's page; the data set's official name, with its
    operation (getEgytLcinfoInqire), stays in the evidence's citation and the trace."""
    c = ev.citation
    agency = (c.get("agency_en") if language == "en" else c.get("agency")) or c.get("agency") or c["title"]
    parts = [("출처: " if language == "ko" else "Source: ") + f"{agency} ({c['url']})"]
    if ev.freshness:
        parts.append(("기준 시각: " if language == "ko" else "As of: ") + when(ev.freshness))
    return " · ".join(parts)


def when(value: str) -> str:
    """A freshness value as people write it: 20261201 → 2026-12-01, an ISO time → 2026-12-01 10:00."""
    v = str(value).strip()
    if re.fullmatch(r"\d{8}", v):
        return f"{v[:4]}-{v[4:6]}-{v[6:]}"
    if re.fullmatch(r"\d{12}(\d{2})?", v):
        return f"{v[:4]}-{v[4:6]}-{v[6:8]} {v[8:10]}:{v[10:12]}"
    try:
        t = dt.datetime.fromisoformat(v)
    except ValueError:
        return v
    return t.strftime("%Y-%m-%d %H:%M") if (t.hour, t.minute) != (0, 0) or "T" in v else t.strftime("%Y-%m-%d")


def completed_parts(evidence: list[tuple[Manifest, Evidence]], language: str) -> list[Part]:
    """The engine's own answer: each result rendered under its tier label, with its source; a
    place a locate step resolved on the way is one line."""
    parts: list[Part] = []
    for m, ev in evidence:
        if m.primitive == "locate" and len(evidence) > 1:
            parts.append(Part("located", _located_line(ev, language), ev.evidence_id))
            continue
        parts.append(Part("label", header(m, ev, language), ev.evidence_id, after="\n"))
        parts.append(Part("evidence", render_evidence(m, ev, language), ev.evidence_id, after="\n"))
        parts.append(Part("source", source_line(ev, language), ev.evidence_id))
    return [*parts, *tail_parts(evidence, language)]


def compose_completed(evidence: list[tuple[Manifest, Evidence]], language: str) -> str:
    return text_of(completed_parts(evidence, language))


def framed_parts(evidence: list[tuple[Manifest, Evidence]], prose: str, language: str) -> list[Part]:
    """A planner's prose inside the engine's frame: a tier label for each piece of evidence first,
    the prose, then each source, the boundary (what was and was not done) and the next step. The
    prose cannot remove or reword any of them."""
    labels = [Part("located", _located_line(ev, language), ev.evidence_id, after="\n") if m.primitive == "locate" and len(evidence) > 1
              else Part("label", header(m, ev, language), ev.evidence_id, after="\n") for m, ev in evidence]
    seen: set[str] = set()
    sources = []
    for _, ev in evidence:
        line = source_line(ev, language)
        if line not in seen:
            seen.add(line)
            sources.append(Part("source", line, ev.evidence_id, after="\n"))
    labels[-1].after = sources[-1].after = "\n\n"
    return [*labels, Part("prose", prose.strip()), *sources, *tail_parts(evidence, language)]


def compose_framed(evidence: list[tuple[Manifest, Evidence]], prose: str, language: str) -> str:
    return text_of(framed_parts(evidence, prose, language))


def moved_label(evidence: list[tuple[Manifest, Evidence]], language: str) -> str:
    """「모의 데이터 · 11월 30일 기록을 오늘 날짜로 옮김」: said once, when Mock moved a recording."""
    days = sorted({ev.moved_from for _, ev in evidence if ev.tier == "mock" and ev.moved_from})
    if not days:
        return ""
    names = []
    for d in days:
        try:
            day = dt.date.fromisoformat(d[:10])
        except ValueError:
            continue
        names.append(f"{day.month}월 {day.day}일" if language == "ko" else day.strftime("%-d %b"))
    if not names:
        return ""
    if language == "ko":
        return f" · {', '.join(names)} 기록을 오늘 날짜로 옮김"
    return f" · recorded {', '.join(names)}, moved to today's date"


def tail_parts(evidence: list[tuple[Manifest, Evidence]], language: str) -> list[Part]:
    """The boundary for the tiers used and the next step for the last result."""
    tier = "mock" if any(ev.tier == "mock" for _, ev in evidence) else "live"
    final = evidence[-1][0]
    nxt = NEXT_STEP[language]
    step = nxt.get(final.domain, nxt["default"])
    if tier == "mock":
        step = nxt["mock"] if final.primitive in ("check", "send") else f"{step} {nxt['mock_lookup']}"
    boundary = BOUNDARY[language][tier]
    if tier == "mock":
        lead = "⚠️ 모의 데이터" if language == "ko" else "⚠️ Mock data"
        boundary = lead + moved_label(evidence, language) + boundary[len(lead):]
    return [Part("boundary", boundary), Part("next", ("다음 단계: " if language == "ko" else "Next: ") + step)]


def frame_tail(evidence: list[tuple[Manifest, Evidence]], language: str) -> list[str]:
    return [p.text for p in tail_parts(evidence, language)]


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
            "동의하시면 동의를 기록한 뒤 같은 요청을 다시 보내 주세요.",
        ])
    return "\n".join([
        f"'{m.title.en}' needs your consent to collect and use personal data (Personal Information Protection Act, Articles 15 and 22). Nothing was run without it.",
        f"  · Purpose: {c.purpose.en}",
        f"  · Data collected: {', '.join(c.data_items)}",
        f"  · Retention: {c.retention.en}",
        f"  · Right to refuse: {c.refusal.en}",
        "To consent, record your consent and send the request again.",
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
    """The question for the missing slots: each slot type's own (or the one of the slot it is
    asked as), once each, in order; 「request」 when no service could be picked."""
    from .understand import table as slot_table

    lang = "en" if language == "en" else "ko"
    words = ASK[lang]
    known: list[str] = []
    unknown: list[str] = []
    for s in missing:
        if s in words and s != "default":
            known.append(words[s])
            continue
        q = slot_table.question(s)
        if q is not None:
            known.append(q.get(lang))
        else:
            unknown.append(s)
    if known:
        return " ".join(dict.fromkeys(known))
    return words["default"].format(slots=", ".join(unknown))


def compose_stop(reason: str, language: str, detail: str = "") -> str:
    return STOPPED[language][reason].format(detail=detail or "-")


# A model provider's failure, said as what it was: an empty or cut reply is not "not responding".
_MODEL_STOPS = {"provider_bad_response": "model_bad_reply", "provider_timeout": "model_timeout",
                "turn_deadline": "model_timeout", "provider_capability": "model_capability",
                "provider_auth": "model_auth"}


def compose_model_stop(code: str, language: str) -> str:
    return compose_stop(_MODEL_STOPS.get(code, "model_unavailable"), language, code)


def compose_lookup_only(m: Manifest, language: str) -> str:
    """The session is in look-up-only mode: a protected step (sign-in, check, submission) is not
    started, and the citizen is told where to do it themselves."""
    if language == "ko":
        return (f"이 대화는 조회 전용 모드라서 '{m.title.ko}'처럼 본인 확인·신청·제출이 "
                "필요한 단계는 진행하지 않았습니다. 공개된 정보 조회만 도와드립니다. 직접 진행하시려면 "
                "공식 창구를 이용해 주세요.")
    return (f"This conversation is in look-up-only mode, so '{m.title.en}' — a step that "
            "needs identity checks, applications or submissions — was not started. Only public "
            "look-ups are done. To do it yourself, use the official channel.")


# -- what the citizen can do where UMMAYA cannot ------------------------------------------------

def links_line(channel: Any, language: str) -> str:
    """「정부24: https://www.gov.kr · ☎ 110」: every link of a channel, and its phone number."""
    items = [f"{link.label.get(language)}: {link.url}" for link in channel.links]
    if channel.phone:
        items.append(f"☎ {channel.phone}")
    return " · ".join(items)


def way_out_parts(channels: list[Any], language: str, *, general: Any = None, intent: Any = None) -> list[Part]:
    """What UMMAYA cannot do and where the citizen can, in one or two plain sentences a channel,
    with its links: the channels the request names, else the general one — said with what the
    request asked to do when it says that (「예약」 → UMMAYA는 예약이나 예매를 대신할 수 없습니다) —
    else the plain stop."""
    if channels:
        return [Part("way_out", f"{c.cannot.get(language)} {c.where.get(language)}\n{links_line(c, language)}")
                for c in channels]
    lead = intent.cannot.get(language) if intent is not None and intent.cannot is not None else None
    if general is None:
        return [Part("way_out", lead or STOPPED[language]["no_adapter"])]
    first = lead or general.cannot.get(language)
    return [Part("way_out", f"{first} {general.where.get(language)}\n{links_line(general, language)}")]


def limit_part(limit: Any, channel: Any, language: str) -> Part:
    """A part of the request the adapter that answered cannot serve, and the channel for it."""
    where = f" {channel.where.get(language)}\n{links_line(channel, language)}" if channel is not None else ""
    return Part("limit", f"{getattr(limit.cannot, language)}{where}")


def emergency_part(emergencies: list[Any], language: str) -> Part:
    """The one line an emergency request opens with: every matched emergency's number on it."""
    lines = [e.says.get(language) for e in emergencies]
    text = " ".join([lines[0], *(re.sub(r"^\W+\s*", "", line) for line in lines[1:])])
    return Part("emergency", text)
