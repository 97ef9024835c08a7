"""Issue 17: a channel's words name only that channel's service. 아이돌봄서비스 is 여성가족부's
home-care programme (idolbom.go.kr), listed in the welfare catalogue; it is not on the childcare
portal, so asking about it reaches the welfare search instead of the portal's way out."""

from __future__ import annotations

from tests.support.offline_turns import ask


def test_the_home_care_programme_is_no_childcare_portal_request(engine):
    r = ask(engine, "아이돌봄 지원 알려줘")
    assert r.stop_reason != "no_adapter", r.answer
    assert [c["adapter_id"] for c in r.calls][:1] == ["mohw_welfare_services"], r.calls


def test_a_daycare_waiting_list_still_goes_to_the_portal(engine):
    r = ask(engine, "어린이집 입소대기 신청해줘")
    assert "childcare.go.kr" in r.answer, r.answer
