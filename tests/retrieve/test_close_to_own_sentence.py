"""A request close to one of the best candidate's own sentences, in two or more of its words, fits
however little of it the index covers (runtime/retrieve/retriever.py ``example_fit``)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever


def _docs():
    return emit_index([
        make_manifest("equipment", title=("병원 장비 조회", "Hospital equipment"),
                      hints=(("병원 장비", "MRI 있는 병원", "빨래"), ("hospital equipment",)),
                      examples=(("동네 정형외과에 MRI 있는 곳",), ())),
        make_manifest("weather", domain="weather", title=("단기예보", "Short-term forecast"),
                      hints=(("내일 날씨", "비 와"), ("forecast",)), examples=(("내일 비 와?",), ())),
    ])[DOCUMENTS_PATH]


def test_two_words_of_an_own_sentence_fit_around_an_unknown_name(tmp_path):
    docs = _docs()
    ask = "하단동 튼튼정형외과에 MRI 있어?"
    assert Retriever(docs, cache_dir=tmp_path / "a", example_fit=0).search(ask) == []
    r = Retriever(docs, cache_dir=tmp_path / "b")
    assert r.close_to_own_sentence(ask, r.ids.index("equipment"))
    assert r.search(ask)[0].adapter_id == "equipment"


def test_one_word_shared_with_a_one_word_hint_is_not_enough(tmp_path):
    r = Retriever(_docs(), cache_dir=tmp_path / "c")
    assert not r.close_to_own_sentence("주말에 빨래방 어디", r.ids.index("equipment"))
