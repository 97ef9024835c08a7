"""The bigram a deixis word makes with its ending (추천해줘 → 천해) is as little evidence as the word:
a request whose only words in common with an adapter are 「추천해줘」 is not covered by it
(runtime/retrieve/retriever.py ``shape_tails``; registry/_vocab/retrieval_words.yaml ``asks``)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever

FILLERS = ("도서관", "주차장", "수영장", "체육관", "박물관", "미술관", "공원", "시장", "터미널", "공항")


def _docs():
    fillers = [make_manifest(f"filler_{k}", domain="culture", title=(w, w), hints=((f"{w} 정보",), ()))
               for k, w in enumerate(FILLERS)]
    return emit_index(fillers + [
        make_manifest("tour", domain="culture", title=("관광 정보", "Tourism information"),
                      hints=(("관광지", "여행지 추천", "가볼 만한 곳"), ("tourist attractions",)),
                      examples=(("부산 관광지 추천해줘", "여행지 추천해줘"), ())),
        make_manifest("training", domain="labour", title=("내일배움카드 훈련과정", "Training courses"),
                      hints=(("내일배움카드", "직업훈련"), ("job training",))),
    ])[DOCUMENTS_PATH]


def test_the_ending_of_a_deixis_word_is_no_evidence(tmp_path):
    r = Retriever(_docs(), cache_dir=tmp_path / "a")
    assert r.shape_tails("고양이 이름 추천해줘") == {"g:천해"}
    assert r.search("고양이 이름 추천해줘") == []
    assert r.search("부산 관광지 추천해줘")[0].adapter_id == "tour"


def test_a_word_that_only_starts_with_a_deixis_word_keeps_its_bigrams(tmp_path):
    r = Retriever(_docs(), cache_dir=tmp_path / "b")
    assert r.shape_tails("내일배움카드 신청") == frozenset()
    assert r.search("내일배움카드 신청")[0].adapter_id == "training"
