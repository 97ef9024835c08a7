"""Issue 17 item 3: a product name ending in a syllable that is also a particle (판토가's 가) is read
whole once the products vocabulary knows it, with a dosage form after it left off (케토톱 파스)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, name", [
    ("판토가 먹으면 머리카락 나?", "판토가"),
    ("판토가를 하루 몇 번 먹어?", "판토가"),
    ("케토톱 파스 떼고 샤워해도 돼?", "케토톱"),
])
def test_a_known_product_is_read_whole(text, name):
    from ummaya.runtime.understand.names import product_in

    assert product_in(text) == name
