"""What a request names that only some adapters take: a product, a welfare programme, a holiday.

Retrieval ranks adapters by their hints; a request may name a thing no hint holds (「탁센에 카페인
들어 있어?」, 「에너지바우처가 뭐야?」) yet a slot vocabulary knows it. ``evidence`` says which adapters
have an input field whose slot type's vocabulary the request names, so the retrieve stage can offer
them when retrieval abstains — and a product question (a product the vocabulary knows, or an
unknown word right before what is asked about a medicine) goes to an adapter that takes a product.
"""

from __future__ import annotations

from typing import Any

from ummaya.model.intent_cues import INTENT_CUES

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


def unasked_step(m: Any, text: str) -> bool:
    """``m`` is a protected step (a submission, or any step behind a consent notice: a check of
    the citizen's own data) whose action the request does not ask for: a vocabulary term named
    (「첫만남이용권은 어떤 제도야?」) is no request to apply or to be checked. A plain check (a
    drug's pregnancy warning) is no protected step."""
    protected = m.primitive == "send" or getattr(m.permission, "consent", None) is not None
    return protected and m.primitive not in implied_by(text)


def implied_by(text: str) -> set[str]:
    """The primitives the request's intent cues imply (the retriever's ``INTENT_CUES``)."""
    return {p for pattern, prims in INTENT_CUES if pattern.search(text) for p in prims}


def values_named(m: Any, text: str, codes: bool = True) -> set[str]:
    """The slot classes of ``m``'s fields for which the request names a value from a declared
    vocabulary: a product the product vocabulary knows (not merely an unknown word before 먹어도),
    a term of a keyword field's vocabulary, or a holiday for a month or date field that has a
    calendar vocabulary; with ``codes``, also a term of a code field's vocabulary (a specialty,
    a life stage). A code term is evidence that the request is for ``m`` (the scope check), but
    no reason to prefer ``m`` over a candidate whose free-text keyword reads the same word."""
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
        elif (st.class_ == "keyword" or (codes and st.class_ == "code")) and st.vocabulary \
                and named_terms(text, st.vocabulary):
            out.add(st.class_)
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


def personal_given(m: Any, text: str, now: Any = None, language: str = "ko") -> set[str]:
    """The personal-class fields of ``m`` whose slot reader reads a value from the request: the
    citizen volunteered their own data (「이름 오지훈, 생년월일 1965.03.15」) for a service that
    takes it. Only fields with a reader count; a derived slot is never the citizen's words."""
    from ..request_context import now_kst
    from .readers import READERS, ReadRequest

    out: set[str] = set()
    for name, prop in (m.input_schema.get("properties") or {}).items():
        st = table.slot_of(prop, name)
        if st is None or st.class_ != "personal" or not st.reader:
            continue
        read = READERS.get(st.reader)
        if read is None:
            continue
        try:
            value = read(ReadRequest(text, now or now_kst(), prop, name, language, {}, st, None, False))
        except Exception:  # a reader that cannot read this text says nothing about it
            value = None
        if value is not None:
            out.add(name)
    return out


def takes_class(m: Any, classes: set[str]) -> bool:
    """Some input field of ``m`` has a slot type of one of ``classes``."""
    return any((st := table.slot_of(p)) is not None and st.class_ in classes
               for p in (m.input_schema.get("properties") or {}).values())


def takes_product(m: Any) -> bool:
    return any((st := table.slot_of(p)) is not None and st.class_ == "product"
               for p in (m.input_schema.get("properties") or {}).values())


__all__ = ["evidence", "implied_by", "named_classes", "names_value", "personal_given", "takes_class", "takes_product",
           "unasked_step", "values_named"]
