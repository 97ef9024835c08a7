"""Issue 17: a medicine's maker named in the request (「종근당 거」, 「한미약품에서 나온」) is sent as the
maker, never as the product and never dropped. The makers are registry data
(registry/_vocab/drug_companies.yaml, slot type drug_company)."""

from __future__ import annotations

import pytest

from tests.support.offline_turns import ask


def drug_args(result) -> dict | None:
    return next((c["arguments"] for c in result.calls if c["adapter_id"] == "mfds_easy_drug_info"), None)


@pytest.mark.parametrize("request_, drug, maker", [
    ("한미약품에서 나온 타이레놀 부작용 알려줘", "타이레놀", "한미약품"),
    ("광동제약 베아제 먹는 법", "베아제", "광동제약"),
])
def test_the_maker_is_sent_as_the_maker(engine, request_, drug, maker):
    args = drug_args(ask(engine, request_))
    assert args is not None
    assert args.get("drug_name") == drug
    assert args.get("company") == maker


def test_no_maker_is_guessed_when_none_is_named(engine):
    args = drug_args(ask(engine, "베아제 먹는 법 알려줘"))
    assert args is not None and "company" not in args
