"""Small hand-made manifests so retrieval is tested without the real registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index, registry_domains
from ummaya.model.manifest import Manifest


def make_manifest(id, *, primitive="find", tier="live", domain="health", agency=("NMC", "국립중앙의료원", "National Medical Center"),
                  title=("제목", "Title"), summary=("요약", "Summary"), hints=((), ()), examples=((), ()),
                  requires=(), provides=(), negatives=(), input_schema=None) -> Manifest:
    data = {
        "id": id,
        "version": "1.0.0",
        "title": {"ko": title[0], "en": title[1]},
        "summary": {"ko": summary[0], "en": summary[1]},
        "agency": {"code": agency[0], "name_ko": agency[1], "name_en": agency[2]},
        "domain": domain,
        "primitive": primitive,
        "tier": tier,
        "search_hints": {"ko": list(hints[0]), "en": list(hints[1])},
        "examples": {"ko": list(examples[0]), "en": list(examples[1])},
        "negative_examples": [{"text": t, "belongs_to": b} for t, b in negatives],
        "permission": {"gate": "read-only"},
        "citation": {"title": "t", "url": "https://example.org", "verified": "2026-11-01",
                     "basis": "법" if primitive in ("check", "send") else None},
        "input_schema": input_schema or {"type": "object", "properties": {}},
        "output_schema": {"type": "object", "properties": {}},
        "requires": list(requires),
        "provides": list(provides),
    }
    if tier == "handoff":
        data["handoff"] = {"channel": {"ko": "창구", "en": "desk"}, "url": "https://example.org",
                           "steps": {"ko": ["가기"], "en": ["go"]}}
    else:
        data["upstream"] = {"base_url": "https://example.org", "path": "/x"}
    return Manifest.model_validate(data)


def small_registry() -> list[Manifest]:
    return [
        make_manifest(
            "er_rooms", title=("근처 응급실 찾기", "Emergency rooms nearby"),
            summary=("가까운 응급의료기관을 알려줍니다", "Nearest emergency departments"),
            hints=(("응급실", "응급의료기관", "쓰러졌어요"), ("emergency room", "ER")),
            examples=(("동아대 승학캠퍼스 근처 응급실 알려줘", "밤에 문 연 응급실"), ("nearest ER",)),
            requires=("coordinates",),
        ),
        make_manifest(
            "pharmacies", title=("문 연 약국 찾기", "Open pharmacies"),
            summary=("지금 문 연 약국", "Pharmacies open now"),
            hints=(("약국", "심야 약국", "휴일 약국"), ("pharmacy", "drugstore")),
            examples=(("일요일에 여는 약국",), ("pharmacy open on Sunday",)),
            requires=("coordinates",),
        ),
        make_manifest(
            "bus_arrivals", domain="transport", agency=("MOLIT", "국토교통부", "Ministry of Land"),
            title=("버스 도착 정보", "Bus arrivals"), summary=("정류장 버스 도착 예정", "When the bus arrives"),
            hints=(("버스 도착", "정류장", "버스 언제 와"), ("bus arrival", "bus stop")),
            examples=(("1001번 버스 언제 와",), ("when is the next bus",)),
        ),
        make_manifest(
            "fine_payment", primitive="send", tier="mock", domain="transport",
            agency=("KNPA", "경찰청", "Korean National Police Agency"),
            title=("교통 과태료 납부", "Pay a traffic fine"), summary=("과태료와 범칙금을 냅니다", "Pay fines"),
            hints=(("과태료", "범칙금", "주차 위반"), ("traffic fine", "parking ticket")),
            examples=(("주차 과태료 내고 싶어",), ("pay my parking ticket",)),
        ),
        make_manifest(
            "fine_lookup", primitive="check", tier="mock", domain="transport",
            agency=("KNPA", "경찰청", "Korean National Police Agency"),
            title=("교통 과태료 조회", "Look up traffic fines"), summary=("받은 과태료를 확인합니다", "Check fines"),
            hints=(("과태료", "범칙금", "위반 내역"), ("traffic fine", "violations")),
            examples=(("과태료 얼마 나왔는지 확인",), ("check my fines",)),
        ),
        make_manifest(
            "place_search", primitive="locate", domain="administration", agency=("KAKAO", "카카오", "Kakao"),
            title=("장소 검색", "Place search"), summary=("이름으로 장소 좌표를 찾습니다", "Find a place by name"),
            hints=(("장소", "어디", "위치"), ("place", "location")),
            examples=(("강남역 위치",), ("where is Busan station",)),
            provides=("coordinates",),
            input_schema={"type": "object", "required": ["query"],
                          "properties": {"query": {"type": "string", "x-slot": "place"}}},
        ),
        make_manifest(
            "move_in", primitive="send", tier="handoff", domain="administration", agency=("MOIS", "행정안전부", "Ministry of the Interior"),
            title=("전입신고", "Move-in report"), summary=("이사 후 전입신고 안내", "Report a new address"),
            hints=(("전입신고", "이사", "주소 이전"), ("move-in report", "change of address")),
            examples=(("이사했는데 전입신고",), ("I moved, register my address",)),
        ),
    ]


@pytest.fixture(scope="session")
def small_manifests() -> list[Manifest]:
    return small_registry()


@pytest.fixture(scope="session")
def small_documents(small_manifests) -> bytes:
    # the real registry's domain glosses (registry/_vocab/domains.yaml), as `ummaya build` files them
    return emit_index(small_manifests, registry_domains(Path(__file__).resolve().parents[2]))[DOCUMENTS_PATH]


@pytest.fixture(scope="session")
def small_generated(tmp_path_factory, small_documents) -> Path:
    gen = tmp_path_factory.mktemp("generated")
    (gen / "index").mkdir()
    (gen / "index" / "documents.json").write_bytes(small_documents)
    return gen


@pytest.fixture(scope="session")
def retriever(small_generated):
    from ummaya.runtime.retrieve import Retriever

    return Retriever.load(small_generated)
