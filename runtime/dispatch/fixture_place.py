"""Where a Mock fixture's data is from, and which fixture is nearest to the place asked about.

Mock replays recorded upstream answers. A request about Seoul answered with Busan hospitals is
labelled Mock yet still wrong for the citizen, so Mock picks the fixture nearest to the requested
place — the same region first, else the shortest distance between coordinates — and the answer
says in one plain line when the data it replays is for another place (「모의 데이터는 부산
기준입니다」).

A place is read from arguments without per-adapter code: coordinates (``x-slot`` latitude /
longitude), a region field (an enum whose ``x-enum-labels`` name regions, or a region name), or a
free-text place (a locate query). A fixture's place is read from its recorded request the same way,
else from its expected output (the first record's coordinates or address).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ummaya.model.manifest import Fixture, Manifest

# Which fields say where is the slot table's to say: a field whose slot class is a region names a
# region (through its enum labels); one whose slot is a span of the citizen's words may name a place.
# Farther apart than this, two points are "another place" for the answer's note.
OTHER_PLACE_KM = 25.0


@dataclass(frozen=True)
class PlaceOf:
    sido: str | None  # short 시도 name (서울, 부산 …)
    point: tuple[float, float] | None
    exact: bool = False  # the point is coordinates given, not a region's centre

    def distance_km(self, other: "PlaceOf") -> float | None:
        if self.point is None or other.point is None:
            return None
        if self.sido is not None and self.sido == other.sido and not (self.exact and other.exact):
            return 0.0  # within one region, a region's centre says nothing about which is nearer
        return _km(self.point, other.point)

    @property
    def known(self) -> bool:
        return self.sido is not None or self.point is not None


def _km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 6371.0 * 2 * math.asin(min(1.0, math.sqrt(h)))


def _sido_of_point(point: tuple[float, float]) -> str:
    from ..understand.regions import sidos

    return min(sidos(), key=lambda s: _km(point, tuple(s["centre"])))["short"]


def _region_of_text(text: str) -> Any:
    from ..understand.regions import find_region

    return find_region(text)


def place_of(manifest: Manifest, args: Mapping[str, Any]) -> PlaceOf:
    """The place ``args`` ask about, as far as the adapter's declarations tell."""
    from ..understand import table

    props: dict[str, Any] = manifest.input_schema.get("properties", {})
    lat = lon = None
    sido = None
    for name, value in args.items():
        prop = props.get(name, {})
        st = table.slot(prop.get("x-slot", name))
        if st is None:
            continue
        whole = table.whole_of(st.name)
        parts = table.parts_of(whole) if whole else ()
        if st.class_ == "coordinates" and parts and st.name == parts[0] and isinstance(value, (int, float)):
            lat = float(value)  # the whole's first part is the latitude (coordinates: [latitude, longitude])
        elif st.class_ == "coordinates" and parts and st.name == parts[-1] and isinstance(value, (int, float)):
            lon = float(value)
        elif st.class_ == "region" and sido is None and value is not None:
            label = (prop.get("x-enum-labels") or {}).get(str(value)) or (
                (prop.get("x-enum-labels") or {}).get(value) if not isinstance(value, str) else None
            ) or str(value)
            region = _region_of_text(str(label))
            if region is not None:
                sido = region.sido_short
        elif "span" in st.facets and sido is None and isinstance(value, str):
            region = _region_of_text(value)
            if region is not None:
                sido = region.sido_short
    point = (lat, lon) if lat is not None and lon is not None else None
    exact = point is not None
    if point is not None and sido is None:
        sido = _sido_of_point(point)
    if point is None and sido is not None:
        from ..understand.regions import sido_centre

        point = sido_centre(sido)
    return PlaceOf(sido, point, exact)


_fixture_places: dict[int, tuple[Fixture, PlaceOf]] = {}


def fixture_place(manifest: Manifest, fixture: Fixture) -> PlaceOf:
    """Cached per fixture object (kept alive with its entry, so an id is never reused)."""
    hit = _fixture_places.get(id(fixture))
    if hit is None or hit[0] is not fixture:
        if len(_fixture_places) > 10_000:
            _fixture_places.clear()
        hit = (fixture, _fixture_place(manifest, fixture))
        _fixture_places[id(fixture)] = hit
    return hit[1]


def _fixture_place(manifest: Manifest, fixture: Fixture) -> PlaceOf:
    place = place_of(manifest, fixture.request)
    if place.known:
        return place
    items = (fixture.expected or {}).get("items")
    first = items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else None
    if first is None:
        return place
    lat, lon = first.get("latitude"), first.get("longitude")
    if isinstance(lat, (int, float)) and isinstance(lon, (int, float)):
        return PlaceOf(_sido_of_point((float(lat), float(lon))), (float(lat), float(lon)), True)
    for key in ("address", "road_address", "address_name"):
        if isinstance(first.get(key), str):
            region = _region_of_text(first[key])
            if region is not None:
                return PlaceOf(region.sido_short, region.centroid)
    return place


def nearest(manifest: Manifest, fixtures: list[Fixture], args: Mapping[str, Any]) -> Fixture | None:
    """The fixture whose place is nearest to the place ``args`` ask about (None: no place asked,
    or no fixture has one)."""
    want = place_of(manifest, args)
    if not want.known:
        return None
    best: tuple[tuple[int, int, float], Fixture] | None = None
    for i, f in enumerate(fixtures):
        have = fixture_place(manifest, f)
        if not have.known:
            continue
        same_region = 0 if (want.sido and want.sido == have.sido) else 1
        dist = want.distance_km(have)
        # A recording of "nothing here" answers only for its own region: elsewhere a recording
        # with data, even a farther one, is the better stand-in.
        items = (f.expected or {}).get("items")
        empty = 1 if same_region and isinstance(items, list) and not items else 0
        key = (same_region, empty, dist if dist is not None else 1e6 + i)
        if best is None or key < best[0]:
            best = (key, f)
    return best[1] if best else None


def other_place_note(manifest: Manifest, fixture: Fixture | None, args: Mapping[str, Any],
                     language: str) -> str | None:
    """One plain line when the replayed data is for another place than asked, else None."""
    if fixture is None:
        return None
    want, have = place_of(manifest, args), fixture_place(manifest, fixture)
    if not want.known or not have.known or have.sido is None:
        return None
    dist = want.distance_km(have)
    other = (want.sido is not None and want.sido != have.sido) or (dist is not None and dist > OTHER_PLACE_KM)
    if not other:
        return None
    if language == "en":
        from ..understand.regions import sidos

        en = next((s["en"] for s in sidos() if s["short"] == have.sido), have.sido)
        return f"Note: this Mock data is for {en}, not the place you asked about."
    return f"모의 데이터는 {have.sido} 기준입니다 (요청하신 곳의 데이터가 아닙니다)."


__all__ = ["PlaceOf", "place_of", "fixture_place", "nearest", "other_place_note"]
