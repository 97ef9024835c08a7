"""A candidate that cannot run on what the request, the session or a locate step can give yields a
near tie to a sibling that can (「약국」 alone asks for pharmacies, not for those open on a day it
does not name). The retriever applies it to its own ranking, so the turn and ``ummaya eval
retrieval`` see one rule; the turn applies it again to candidates the dialogue ranked."""

from __future__ import annotations

from typing import Any

# A candidate that lacks a required input yields to a sibling within this share of its score.
RUNNABLE_TIE = 0.85


def lacks(m: Any, catalog: Any, request: str, language: str, carried: frozenset[str]) -> list[str]:
    """The required inputs of ``m`` only the citizen can give and the request does not: not carried
    by the session, provided by no locate step (coordinates, a region come from the place named),
    and not read from the request by the slot type's own reader (a day, a code, a hospital's name)."""
    from ..request_context import now_kst
    from ..understand import table
    from ..understand.readers import READERS, ReadRequest

    props = m.input_schema.get("properties") or {}
    provided = set(catalog.locate_providers) | table.slot_table().of_class("coordinates")
    out = []
    now = now_kst()
    for name in m.input_schema.get("required") or ():
        prop = props.get(name) or {}
        st = table.slot_of(prop, name)
        slot = st.name if st is not None else prop.get("x-slot", name)
        if slot in carried or name in carried or slot in provided:
            continue
        if st is not None and st.personal:
            # Personal data (a name, a birth date) is never in a request: the protected flow asks
            # for it after the consent notice, of whichever adapter is chosen. Its absence says
            # nothing about which adapter was asked for (「우리 집 소득으로 지원 대상인지 확인」).
            continue
        read = READERS.get(st.reader) if st is not None and st.reader else None
        if read is None:
            continue  # a derived slot: a chain or the session fills it, not the citizen's words
        try:
            value = read(ReadRequest(request, now, prop, name, language, {}, st, None, True))
        except Exception:  # a reader that cannot read this text says nothing about it
            value = None
        if value is None:
            out.append(name)
    return out


def _slots(m: Any, names: list[str] | tuple[str, ...]) -> set[str]:
    from ..understand import table

    props = m.input_schema.get("properties") or {}
    out = set()
    for name in names:
        prop = props.get(name) or {}
        st = table.slot_of(prop, name)
        out.add(st.name if st is not None else prop.get("x-slot", name))
    return out


def as_placeless(m: Any, missing: list[str], o: Any, catalog: Any, carried: frozenset[str]) -> bool:
    """Whether sibling ``o`` is no more runnable than ``m``: all ``m`` lacks says where (a stop,
    a city: the slot table's ``where`` facet), and ``o`` takes its own where from a locate step
    that the same unnamed place must feed (「정류장에서 얼마나 더 기다려야 돼」: arrivals lack the stop,
    and the nearby-stops search lacks the place its coordinates come from just as much)."""
    from ..understand import table

    where = table.names_with("where")
    if not missing or not _slots(m, missing) <= where:
        return False
    located = set(catalog.locate_providers) | table.slot_table().of_class("coordinates")
    needs = _slots(o, tuple(o.input_schema.get("required") or ()))
    return any(s in located and s in where and s not in carried for s in needs)


def yields(ranked: list[dict[str, Any]], catalog: Any, request: str, language: str,
           carried: frozenset[str]) -> list[int]:
    """Positions among the first four candidates that yield a near tie: each lacks an input
    (:func:`lacks`) and a sibling of the same primitive lacking nothing follows within
    ``RUNNABLE_TIE`` of its score. A conversation's pinned candidate never yields."""
    out: list[int] = []
    top4 = ranked[:4]
    for k, c in enumerate(top4):
        m = catalog.adapters.get(c["adapter_id"])
        if c.get("carried") or m is None or m.primitive == "locate":
            continue
        missing = lacks(m, catalog, request, language, carried)
        if not missing:
            continue
        best = float(c.get("score") or 0.0)
        for other in top4[k + 1:]:
            if float(other.get("score") or 0.0) < RUNNABLE_TIE * best:
                break
            o = catalog.adapters.get(other["adapter_id"])
            if o is not None and o.primitive == m.primitive and not lacks(o, catalog, request, language, carried) \
                    and not as_placeless(m, missing, o, catalog, carried):
                out.append(k)
                break
    return out


def prefer_runnable(ranked: list[dict[str, Any]], catalog: Any, request: str, language: str,
                    carried: frozenset[str]) -> list[dict[str, Any]]:
    """「약국」 alone asks for pharmacies, not for those open on a day it does not name: a top
    candidate whose required input only the citizen can give (a day, a code, a hospital's name,
    :func:`lacks`) and the request does not give yields a near tie (``RUNNABLE_TIE``) to a
    sibling of the same primitive that lacks nothing. A clear lead, or one the conversation pins,
    is left alone."""
    if len(ranked) < 2 or ranked[0].get("carried"):
        return ranked
    top = catalog.adapters.get(ranked[0]["adapter_id"])
    if top is None or top.primitive == "locate":
        return ranked
    missing = lacks(top, catalog, request, language, carried)
    if not missing:
        return ranked
    best = float(ranked[0].get("score") or 0.0)
    for i, c in enumerate(ranked[1:4], 1):
        if float(c.get("score") or 0.0) < RUNNABLE_TIE * best:
            break
        m = catalog.adapters.get(c["adapter_id"])
        if m is None or m.primitive != top.primitive:
            continue
        if not lacks(m, catalog, request, language, carried) and not as_placeless(top, missing, m, catalog, carried):
            return [ranked[i], *ranked[:i], *ranked[i + 1:]]
    return ranked


