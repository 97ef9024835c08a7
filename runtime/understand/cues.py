"""What a request names that only some adapters take: a product, a welfare programme, a holiday.

Retrieval ranks adapters by their hints; a request may name a thing no hint holds (「탁센에 카페인
들어 있어?」, 「에너지바우처가 뭐야?」) yet a slot vocabulary knows it. ``evidence`` says which adapters
have an input field whose slot type's vocabulary the request names, so the retrieve stage can offer
them when retrieval abstains — and a product question (a product the vocabulary knows, or an
unknown word right before what is asked about a medicine) goes to an adapter that takes a product.
"""

from __future__ import annotations

from typing import Any

from . import table
from .dates import holiday_in
from .labels import named_terms
from .names import product_cue


def named_classes(text: str) -> dict[str, bool]:
    """Which cues the request holds: a product, a term of a keyword vocabulary, a holiday."""
    return {"product": product_cue(text), "holiday": holiday_in(text) is not None}


def evidence(manifests: list[Any], text: str) -> list[tuple[Any, int, bool]]:
    """(adapter, fields the request names a value for, strong) for every adapter with evidence;
    strong: a product or a term of the field's own vocabulary, not only a holiday."""
    cues = named_classes(text)
    out = []
    for m in manifests:
        hits, strong = 0, False
        for prop in (m.input_schema.get("properties") or {}).values():
            st = table.slot_of(prop)
            if st is None:
                continue
            if st.class_ == "product" and cues["product"]:
                hits, strong = hits + 1, True
            elif st.class_ == "keyword" and st.vocabulary and named_terms(text, st.vocabulary):
                hits, strong = hits + 1, True
            elif st.class_ == "month" and st.vocabulary and cues["holiday"]:
                hits += 2  # a holiday names a day of the calendar: the month it falls in first
            elif st.class_ == "date" and st.vocabulary and cues["holiday"]:
                hits += 1
            elif st.class_ == "code" and st.vocabulary and named_terms(text, st.vocabulary):
                hits += 1  # a specialty, a life stage: offered only when retrieval found nothing
        if hits:
            out.append((m, hits, strong))
    out.sort(key=lambda x: (not x[2], -x[1], x[0].id))
    return out


def values_named(m: Any, text: str) -> set[str]:
    """The slot classes of ``m``'s fields for which the request names a value from a declared
    vocabulary: a product the product vocabulary knows (not merely an unknown word before 먹어도),
    a term of a keyword field's vocabulary, or a holiday for a month or date field that has a
    calendar vocabulary."""
    from .names import _whole_product

    product: bool | None = None
    holiday: bool | None = None
    out: set[str] = set()
    for prop in (m.input_schema.get("properties") or {}).values():
        st = table.slot_of(prop)
        if st is None:
            continue
        if st.class_ == "product":
            if product is None:
                product = _whole_product(text) is not None
            if product:
                out.add("product")
        elif st.class_ == "keyword" and st.vocabulary and named_terms(text, st.vocabulary):
            out.add("keyword")
        elif st.class_ in ("month", "date") and st.vocabulary:
            if holiday is None:
                holiday = holiday_in(text) is not None
            if holiday:
                out.add(st.class_)
    return out


def names_value(m: Any, text: str) -> bool:
    """The request names a value one of ``m``'s fields takes from a declared vocabulary
    (``values_named``): evidence of its own that the request is for ``m``, whatever its text
    coverage (the scope check, runtime/turn/scope.py)."""
    return bool(values_named(m, text))


def takes_class(m: Any, classes: set[str]) -> bool:
    """Some input field of ``m`` has a slot type of one of ``classes``."""
    return any((st := table.slot_of(p)) is not None and st.class_ in classes
               for p in (m.input_schema.get("properties") or {}).values())


def takes_product(m: Any) -> bool:
    return any((st := table.slot_of(p)) is not None and st.class_ == "product"
               for p in (m.input_schema.get("properties") or {}).values())


__all__ = ["evidence", "named_classes", "names_value", "takes_class", "takes_product", "values_named"]
