"""Issue 17: what the request names or gives decides among close candidates — a code vocabulary's
term is evidence for its adapter, the citizen's own data (a name and a date of birth) goes to the
service that takes it, and a programme named without asking to apply never reaches a consent
notice. Through the real planner on the committed catalog (offline, Mock)."""

from __future__ import annotations

from tests.support.offline_turns import ask


def called(result) -> list[str]:
    return [c["adapter_id"] for c in result.calls]


def test_a_specialty_with_typed_coordinates_is_no_weak_near_miss(engine):
    r = ask(engine, "신경과 찾아줘 35.1796, 129.0756")
    assert r.stop_reason == "completed", r.stop_reason
    [args] = [c["arguments"] for c in r.calls if c["adapter_id"] == "hira_hospitals"]
    assert args.get("specialty") and args["latitude"] == 35.1796


def test_own_name_and_birth_date_go_to_the_check_that_takes_them(engine):
    r = ask(engine, "최유나 910506 에너지바우처 대상자야?", consents=("welfare_eligibility_check",))
    assert "welfare_eligibility_check" in called(r), called(r)
    [args] = [c["arguments"] for c in r.calls if c["adapter_id"] == "welfare_eligibility_check"]
    assert args["person_name"] == "최유나" and args["birth_date"] == "1991-05-06"


def test_own_data_reaches_a_submission_only_when_asked_to_apply(engine):
    r = ask(engine, "에너지바우처 신청할게요 이름 김하늘 생년월일 1990-02-03", consents=("welfare_application_submit",))
    assert "welfare_application_submit" in called(r), called(r)
    r = ask(engine, "이름 김하늘 생년월일 1990-02-03 에너지바우처 받을 수 있어?",
            consents=("welfare_application_submit", "welfare_eligibility_check"))
    assert "welfare_application_submit" not in called(r), called(r)


def test_a_programme_named_without_applying_reaches_no_consent_notice(engine):
    r = ask(engine, "아동수당은 어떤 제도야?")
    assert r.stop_reason != "consent_required", called(r)
    assert r.calls and "welfare_application_submit" not in called(r)
