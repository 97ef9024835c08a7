"""A facility named by its own name, glued to its kind's suffix (registry/_vocab/facility_names.yaml:
행복약국, 새봄약국), is a name to search for: the ranked adapter that searches that kind by name goes
first, and the name is no topic against its coverage (Retriever.named_facility)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever


def _by_name():
    return make_manifest(
        "pharmacy_by_name", title=("약국 이름으로 찾기", "Find a pharmacy by name"),
        summary=("이름으로 약국을 찾아 주소와 전화번호를 알려줍니다", "A named pharmacy's address and phone"),
        hints=(("이름으로 찾기", "상호 연락처"), ("pharmacy phone number",)),
        examples=(("온누리건강약국 연락처 알려줘",), ("phone of Onnuri pharmacy",)),
        input_schema={"type": "object", "required": ["name"],
                      "properties": {"name": {"type": "string", "x-slot": "keyword"}}},
    )


def _retriever(tmp_path, small_manifests):
    return Retriever(emit_index([*small_manifests, _by_name()])[DOCUMENTS_PATH], cache_dir=tmp_path / "n")


def test_a_named_pharmacy_goes_to_the_search_by_name(tmp_path, small_manifests):
    r = _retriever(tmp_path, small_manifests)
    for ask in ("서울 종로 행복약국 위치", "부산 새봄약국 어디 있어?"):
        found = r.search(ask)
        assert found and found[0].adapter_id == "pharmacy_by_name", ask
    # Without the facility reading the nearby search keeps it (the rule is what decides).
    r._facility_kinds = ()
    assert [c.adapter_id for c in r.search("서울 종로 행복약국 위치")][:1] != ["pharmacy_by_name"]


def test_a_kind_of_pharmacy_is_no_name(tmp_path, small_manifests):
    # 심야 and 휴일 are what the nearby pharmacies say of themselves: kinds, not names.
    r = _retriever(tmp_path, small_manifests)
    assert r.named_facility("심야약국 어디 있어?") is None
    assert r.named_facility("휴일약국 알려줘") is None
    assert r.search("휴일약국 알려줘")[0].adapter_id == "pharmacies"
    # A pharmacy near a place is no name either (the suffix stands alone).
    assert r.named_facility("부산역 근처 약국 알려줘") is None


def test_a_short_form_read_out_is_no_name(tmp_path, small_manifests):
    # 고 is the short form of 고등학교 (해운대고): 「전입신고」 does not name a school.
    assert _retriever(tmp_path, small_manifests).named_facility("전입신고 online") is None
