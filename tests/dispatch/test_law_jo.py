"""The ``law_jo`` derived parameter: 법제처 DRF lawService's JO, so one article is asked for instead
of the whole law. The guide (lawService target=law): 「JO: 조번호, 생략 시 모든 조 표시, 6자리:
조번호4자리+조가지번호2자리」 — 000300 is 제3조, 001002 제10조의2."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ummaya.runtime.catalog import Catalog
from ummaya.runtime.dispatch.request import build_request
from ummaya.wire.errors import UpstreamError
from ummaya.wire.resolvers import resolve, resolver_expressions

NOW = dt.datetime(2026, 12, 1, 1, 0, tzinfo=dt.timezone.utc)
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args,jo", [
    ({"article": "3"}, "000300"),
    ({"article": "60"}, "006000"),
    ({"article": "10", "article_branch": "2"}, "001002"),
    ({"article": "234", "article_branch": 2}, "023402"),
    ({"article": "1234"}, "123400"),
])
def test_the_article_is_four_digits_and_its_branch_two(args: dict, jo: str) -> None:
    assert resolve("law_jo.code", args, NOW) == jo
    assert "law_jo.code" in resolver_expressions()


def test_no_article_derives_nothing_and_a_malformed_one_is_refused() -> None:
    assert resolve("law_jo.code", {"law_name": "근로기준법"}, NOW) == ""
    for bad in ({"article": "12345"}, {"article": "3조"}, {"article": "3", "article_branch": "123"}):
        with pytest.raises(UpstreamError):
            resolve("law_jo.code", bad, NOW)


def test_the_law_adapter_sends_jo_only_when_an_article_is_asked() -> None:
    upstream = Catalog.load(REPO / "generated").adapters["moleg_law_search"].upstream
    one = dict(build_request(upstream, {"law_name": "주택임대차보호법", "article": "3", "mst": "252527"},
                             base_url="https://www.law.go.kr", now=NOW, env=None).params)
    assert one["JO"] == "000300" and one["MST"] == "252527" and one["target"] == "law"
    whole = dict(build_request(upstream, {"law_name": "근로기준법", "mst": "265959"},
                               base_url="https://www.law.go.kr", now=NOW, env=None).params)
    assert "JO" not in whole  # 생략 시 모든 조: the first articles are kept after the call
