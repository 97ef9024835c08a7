"""The ``near_box`` derived parameters: a WGS84 box around the citizen's position for upstreams
that filter by startLat/endLat/startLot/endLot (safetydata.go.kr shelter sets)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from ummaya.wire.errors import UpstreamError
from ummaya.wire.resolvers import resolve, resolver_expressions

NOW = dt.datetime(2026, 7, 20, 3, 0, tzinfo=dt.timezone.utc)


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r = 6371.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


@pytest.mark.parametrize("lat,lon", [(37.5665, 126.978), (35.1167, 128.968), (33.25, 126.56)])
def test_the_box_edges_lie_about_2_5_km_away_each_way(lat: float, lon: float) -> None:
    args = {"latitude": lat, "longitude": lon}
    box = {f: float(resolve(f"near_box.{f}", args, NOW)) for f in ("south", "north", "west", "east")}
    assert box["south"] < lat < box["north"] and box["west"] < lon < box["east"]
    for edge in (_km(lat, lon, box["south"], lon), _km(lat, lon, box["north"], lon),
                 _km(lat, lon, lat, box["west"]), _km(lat, lon, lat, box["east"])):
        assert 2.4 < edge < 2.6
    # A record 2 km to the north-east (the nearest-first cut-off) is inside the box.
    d = 2.0 / math.sqrt(2) / 111.32
    ne_lat, ne_lon = lat + d, lon + d / math.cos(math.radians(lat))
    assert _km(lat, lon, ne_lat, ne_lon) == pytest.approx(2.0, abs=0.05)
    assert box["south"] < ne_lat < box["north"] and box["west"] < ne_lon < box["east"]


def test_the_value_is_sent_with_six_decimals_and_needs_coordinates() -> None:
    value = resolve("near_box.north", {"latitude": "35.1", "longitude": "129.0"}, NOW)
    assert len(value.split(".")[1]) == 6
    assert "near_box.east" in resolver_expressions()
    with pytest.raises(UpstreamError):
        resolve("near_box.west", {"latitude": 35.1}, NOW)
