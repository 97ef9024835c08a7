"""When the best candidate leads on words that cover little of the request and does not fit, a
runner-up among the best few that covers most of the request on its own answers instead of an
abstention (runtime/retrieve/retriever.py ``fit_depth`` / ``fit_coverage``)."""

from tests.retrieve.conftest import make_manifest

from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index
from ummaya.runtime.retrieve import Retriever


FILLERS = ("도서관", "주차장", "수영장", "체육관", "박물관", "미술관", "공원", "시장", "터미널", "공항",
           "학교", "유치원", "어린이집", "경로당", "보건소", "우체국", "세무서", "법원", "경찰서", "소방서")


def _docs():
    fillers = [make_manifest(f"filler_{k}", domain="culture", title=(w, w), hints=((f"{w} 정보",), ()))
               for k, w in enumerate(FILLERS)]
    return emit_index(fillers + [
        make_manifest("festivals", domain="culture", title=("이번 주말 행사", "Events this weekend"),
                      hints=(("이번 주말", "이번 주말 행사", "이번 주말 공연", "이번 주말 축제"), ("weekend events",)),
                      examples=(("이번 주말 행사 뭐 있어?", "이번 주말 공연"), ())),
        make_manifest("forecast", domain="weather", title=("단기예보", "Short-term forecast"),
                      hints=(("우산 챙겨야 해?", "비 와?"), ("umbrella",)), examples=(("주말에 우산 챙겨야 돼?",), ())),
        make_manifest("pharmacy", title=("약국", "Pharmacy"), hints=(("약국",), ("pharmacy",))),
    ])[DOCUMENTS_PATH]


def test_a_runner_up_that_covers_the_request_answers(tmp_path):
    docs = _docs()
    ask = "이번 주말에 우산 챙겨야 돼?"  # 이번 (calendar deixis) ranks the events first, covering little
    assert Retriever(docs, cache_dir=tmp_path / "a", fit_depth=1).search(ask) == []
    got = Retriever(docs, cache_dir=tmp_path / "b").search(ask)
    assert [c.adapter_id for c in got[:2]] == ["forecast", "festivals"]
    assert got[0].score >= got[1].score


def test_no_runner_up_that_covers_little_answers(tmp_path):
    r = Retriever(_docs(), cache_dir=tmp_path / "c")
    assert r.search("이번 주말 영화관 상영 시간표") == []


def test_a_runner_up_below_the_coverage_bar_does_not_answer(tmp_path):
    r = Retriever(_docs(), cache_dir=tmp_path / "d", fit_coverage=1.01)
    assert r.search("이번 주말에 우산 챙겨야 돼?") == []
