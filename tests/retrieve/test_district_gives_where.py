"""A request naming a district gives a where-slot: adapters that require one are scored like those
whose slots a session already knows (runtime/retrieve/retriever.py ``district_boost``)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever

_SIDO = {"type": "object", "required": ["sido_name"],
         "properties": {"sido_name": {"type": "string", "x-slot": "sido_name"}}}


def _welfare():
    return [
        make_manifest("national", domain="welfare", title=("복지 서비스 목록", "Welfare services"),
                      hints=(("복지 서비스", "복지 서비스 목록", "지원금"), ("welfare benefits",)), examples=(("받을 수 있는 지원금 뭐 있어",), ())),
        make_manifest("local", domain="welfare", title=("지자체 복지 서비스", "Local welfare services"),
                      hints=(("복지 서비스", "구청 지원"), ("local welfare",)), examples=(("우리 동네 복지 서비스 있어?",), ()),
                      input_schema=_SIDO),
    ]


def test_a_named_district_puts_the_adapter_that_takes_one_first(tmp_path):
    docs = emit_index(_welfare())[DOCUMENTS_PATH]
    r = Retriever(docs, cache_dir=tmp_path / "a")
    assert dict(zip(r.ids, r._where_mask().tolist(), strict=True)) == {"local": True, "national": False}
    assert r.names_district("동래구 복지 서비스") and r.names_district("welfare in Haeundae-gu")
    assert not r.names_district("복지 서비스")
    assert r.search("동래구 복지 서비스")[0].adapter_id == "local"
    assert r.search("복지 서비스")[0].adapter_id == "national"
    off = Retriever(docs, cache_dir=tmp_path / "b", district_boost=0)
    assert off.search("동래구 복지 서비스")[0].adapter_id == "national"
