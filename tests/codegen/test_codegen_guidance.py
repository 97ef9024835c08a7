"""registry/_emergency, _channels and _intents are compiled into generated/guidance.json with every
problem as path:line, and a manifest's limits must name a channel and an intent that exist."""

from __future__ import annotations

import json
from pathlib import Path

from tests.codegen.project import GOV24, NMC, edit, line_of, make_project
from ummaya.codegen import builder as b
from ummaya.codegen.emit_cache import Cache

EMERGENCY = """id: medical
numbers: ["119"]
says: {ko: "🚨 지금 119에 전화하세요.", en: "🚨 Call 119 now."}
cannot: {ko: "대신할 수 없습니다.", en: "Cannot call for you."}
phrases: {ko: [쓰러], en: [collapsed]}
source: {title: 소방청, url: "https://www.119.go.kr", verified: 2026-12-01}
"""
CHANNEL = """id: passport
name: {ko: 여권, en: Passport}
words: {ko: [여권], en: [passport]}
cannot: {ko: "여권은 할 수 없습니다.", en: "No passports."}
where: {ko: "구청에서 하세요.", en: "At the district office."}
links:
  - {label: {ko: 여권안내, en: Passports}, url: "https://www.passport.go.kr"}
citation: {title: 외교부, url: "https://www.passport.go.kr", verified: 2026-12-01}
"""
INTENT = """id: apply
words: {ko: [신청], en: [apply]}
"""


def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "p")
    for folder, name, text in (("_emergency", "medical", EMERGENCY), ("_channels", "passport", CHANNEL), ("_intents", "apply", INTENT)):
        (root / "registry" / folder).mkdir()
        (root / "registry" / folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


def test_guidance_is_compiled_with_service_words(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = b.build(root, cache=Cache(tmp_path / "cache"))
    assert result.plan.ok, result.plan.problems
    doc = json.loads((root / "generated/guidance.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in doc["emergencies"]] == ["medical"]
    assert [c["id"] for c in doc["channels"]] == ["passport"]
    # derived from hints and title, the intent words taken out: 「전입신고」 names the move-in report
    words = doc["services"]["gov24_move_in_report"]
    assert "전입신고" in words["ko"] and "신청" not in words["ko"] and words["declared"] is False
    # the folders are data, not manifests
    assert {a["id"] for a in json.loads((root / "generated/catalog.json").read_text())["adapters"]} == {
        "gov24_move_in_report", "kakao_keyword_search", "nmc_emergency_rooms"}


def test_an_emergency_line_that_does_not_name_its_number_is_a_located_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / "registry/_emergency/medical.yaml"
    edit(path, 'en: "🚨 Call 119 now."', 'en: "🚨 Call now."')
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    assert any(p.path == "registry/_emergency/medical.yaml" and "must name 119" in p.message for p in plan.problems), plan.problems


def test_a_channel_id_must_match_its_file_name(tmp_path: Path) -> None:
    root = project(tmp_path)
    edit(root / "registry/_channels/passport.yaml", "id: passport", "id: passports")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    assert any(p.path == "registry/_channels/passport.yaml" and p.line == 1 and "file name" in p.message for p in plan.problems)


def test_a_limit_naming_an_unknown_channel_or_intent_is_a_located_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    manifest = root / NMC
    edit(manifest, "permission:", "limits:\n  - intent: book\n    cannot: {ko: 예약은 못 합니다., en: No booking.}\n    channel: nowhere\npermission:")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    got = {(p.path, p.line, p.message.split(":")[0]) for p in plan.problems}
    assert (NMC, line_of(manifest, "channel: nowhere"), "limits.0.channel") in got, plan.problems
    assert (NMC, line_of(manifest, "intent: book"), "limits.0.intent") in got, plan.problems


def test_declared_service_words_win_over_derived_ones(tmp_path: Path) -> None:
    root = project(tmp_path)
    edit(root / GOV24, "permission:", "service_words: {ko: [전입신고], en: [moving-in report]}\npermission:")
    result = b.build(root, cache=Cache(tmp_path / "cache"))
    assert result.plan.ok, result.plan.problems
    words = json.loads((root / "generated/guidance.json").read_text(encoding="utf-8"))["services"]["gov24_move_in_report"]
    assert words == {"ko": ["전입신고"], "en": ["moving-in report"], "declared": True}


def test_a_fixture_of_an_adapter_with_datetime_fields_must_say_its_day(tmp_path: Path) -> None:
    root = project(tmp_path)
    manifest = root / NMC
    edit(manifest, "hospital_id: {type: string}", "hospital_id: {type: string, x-datetime: yyyymmdd}")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    first = line_of(manifest, "  - name: ")
    assert any(p.path == NMC and p.line == first and "as_of" in p.message for p in plan.problems), plan.problems
    edit(manifest, "x-datetime: yyyymmdd}", "x-datetime: when}")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    assert any(p.path == NMC and "unknown format 'when'" in p.message for p in plan.problems), plan.problems


MOVE_CHANNEL = CHANNEL.replace("id: passport", "id: moving").replace(
    "words: {ko: [여권], en: [passport]}", "words: {ko: [주소 이전, 여권], en: [passport]}")


def test_a_channel_phrase_an_adapter_serves_but_names_less_specifically_is_a_located_error(tmp_path: Path) -> None:
    # the move-in report's hints say 「주소 이전」 and its derived words name part of it (주소):
    # a request 「주소 이전 하려고」 would reach the channel instead of the adapter that serves it
    root = project(tmp_path)
    channel = root / "registry/_channels/moving.yaml"
    channel.write_text(MOVE_CHANNEL, encoding="utf-8")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    hidden = [p for p in plan.problems if "gov24_move_in_report" in p.message]
    assert [(p.path, p.line) for p in hidden] == [("registry/_channels/moving.yaml", line_of(channel, "주소 이전"))], plan.problems
    assert "'주소 이전'" in hidden[0].message and "service_words" in hidden[0].message
    # the adapter declaring the phrase as its own service clears it
    edit(root / GOV24, "permission:", "service_words: {ko: [전입신고, 주소 이전], en: [moving-in report]}\npermission:")
    assert not [p for p in b.plan_build(root, cache=Cache(tmp_path / "cache")).problems if "gov24_move_in_report" in p.message]


def test_a_channel_phrase_an_adapter_only_mentions_is_the_channels(tmp_path: Path) -> None:
    # 「주민센터」 and 「정부24」 are in the move-in report's hints, and its words name them whole (a
    # tie goes to the adapter at query time) or not at all once declared: no hidden service
    root = project(tmp_path)
    (root / "registry/_channels/moving.yaml").write_text(
        MOVE_CHANNEL.replace("[주소 이전, 여권]", "[주민센터, 정부24, 여권]"), encoding="utf-8")
    plan = b.plan_build(root, cache=Cache(tmp_path / "cache"))
    assert not [p for p in plan.problems if "gov24_move_in_report" in p.message], plan.problems
