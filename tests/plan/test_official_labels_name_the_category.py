"""Issue 17: a category the request names by the official label its manifest declares
(x-enum-labels: 청년, 아동) moves the adapter taking that category before finds that take nothing
the request names, whatever the label's length — a short synonym (아이) still says too little, and
a longer word the label only starts (아동수당) is another thing. Through the real planner on the
committed catalog (offline, Mock), and the rule itself on a field's schema."""

from __future__ import annotations

from tests.support.offline_turns import ask


def test_a_two_syllable_official_label_picks_the_category_search(engine):
    r = ask(engine, "청년 혜택 알려줘")
    assert [(c["adapter_id"], c["arguments"].get("life_stage")) for c in r.calls][:1] == [
        ("mohw_welfare_services", "004")], r.calls


def test_an_official_label_counts_only_as_a_whole_word_of_the_field():
    from ummaya.runtime.understand.labels import names_official_label

    prop = {"enum": ["002", "060"], "x-enum-labels": {"002": "아동", "060": "한부모·조손"}}
    assert names_official_label("아동 지원 뭐 있어?", prop, "아동")
    assert names_official_label("한부모 가정 혜택", prop, "한부모")  # a part of a joined label
    assert names_official_label("아동을 위한 복지", prop, "아동")  # before a particle
    assert not names_official_label("아동수당 얼마야?", prop, "아동")  # another word it starts
    assert not names_official_label("청년 지원", prop, "청년")  # not this field's label


def test_locate_steps_ranked_first_do_not_push_the_named_find_out(engine):
    # 「어디 있어」 ranks two place searches first; the specialty the request names still brings
    # the hospital search forward (it was fifth, outside a window counting the locates).
    r = ask(engine, "신경과 어디 있어 36.6424, 127.489 근처")
    assert r.stop_reason == "completed", r.answer
    [args] = [c["arguments"] for c in r.calls if c["adapter_id"] == "hira_hospitals"]
    assert args["latitude"] == 36.6424 and args.get("specialty")
