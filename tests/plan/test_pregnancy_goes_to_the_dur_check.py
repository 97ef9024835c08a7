"""Issue 17: 「X 임산부가 먹어도 돼?」 asks the pregnancy contraindication list (DUR 임부금기,
mfds_dur_pregnancy, whose service words declare 임산부), with the medicine named in the request or
carried from the turn before — not the general leaflet (mfds_easy_drug_info), which only says to
ask a doctor. evals/arguments.yaml expects the same."""

from __future__ import annotations

from tests.support.offline_turns import ask


def test_a_named_medicine_for_a_pregnant_citizen_is_the_dur_check(engine):
    r = ask(engine, "판콜에이 임산부가 먹어도 돼?")
    assert [(c["adapter_id"], c["arguments"].get("drug_name")) for c in r.calls][:1] == [
        ("mfds_dur_pregnancy", "판콜에이")], r.calls


def test_the_carried_medicine_goes_to_the_dur_check(engine):
    r = ask(engine, "베아제 먹는 법 알려줘", "임산부가 먹어도 돼?")
    assert [(c["adapter_id"], c["arguments"].get("drug_name")) for c in r.calls][:1] == [
        ("mfds_dur_pregnancy", "베아제")], r.calls


def test_the_eval_expects_the_dur_check_for_pregnancy_questions():
    import yaml
    from pathlib import Path

    cases = yaml.safe_load((Path(__file__).resolve().parents[2] / "evals" / "arguments.yaml").read_text())["cases"]
    asked = [c for c in cases if "임산부" in c["request"] and "먹어도" in c["request"]]
    assert asked and {c["adapter"] for c in asked} == {"mfds_dur_pregnancy"}, asked
