"""Coordinates: one conversion path for every manifest, through pyproj (PROJ and the EPSG
database), never hand-written projection formulas.

Manifests declare a coordinate system per field — ``upstream.coordinates`` (where a record's
position is: EPSG:4326 WGS84, EPSG:5174 the Bessel 중부원점 TM of the MOIS licensing sets,
EPSG:2097 …) and ``upstream.project_params`` (the citizen's WGS84 position sent as TM x/y) — and
the engine converts with a ``Transformer`` built once per pair of systems (``always_xy``: x is the
easting or longitude, y the northing or latitude, whatever the EPSG axis order says). The datum
shift between the Bessel-based Korean systems and WGS84 is the one the EPSG database publishes for
the pair; the tests pin Seoul City Hall and Busan City Hall within metres.

pyproj is imported on first use only: most calls never convert anything, and a cold ``ummaya ask``
should not pay for PROJ's database.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from .errors import ADAPTER_ERROR, UpstreamError

WGS84 = "EPSG:4326"
EARTH_RADIUS_KM = 6371.0088  # mean radius (IUGG); the haversine's error is under 0.5 %


@functools.lru_cache(maxsize=32)
def _transformer(src: str, dst: str) -> Any:
    try:
        from pyproj import Transformer
        from pyproj.exceptions import CRSError
    except ImportError as exc:  # pragma: no cover - pyproj is a dependency
        raise UpstreamError(ADAPTER_ERROR, "CRS", "pyproj is not installed") from exc
    try:
        return Transformer.from_crs(src, dst, always_xy=True)
    except CRSError as exc:
        raise UpstreamError(ADAPTER_ERROR, "CRS", f"unknown coordinate system {src} or {dst}: {exc}") from exc


def known_crs(code: str) -> bool:
    """Whether pyproj knows ``code`` (the build checks every manifest's declared systems)."""
    try:
        _transformer(code, WGS84)
    except UpstreamError:
        return False
    return True


def to_wgs84(crs: str, x: float, y: float) -> tuple[float, float]:
    """(latitude, longitude) of a point given in ``crs`` as x (easting/longitude), y."""
    if crs == WGS84:
        return float(y), float(x)
    lon, lat = _transformer(crs, WGS84).transform(float(x), float(y))
    if not (math.isfinite(lat) and math.isfinite(lon)):
        raise UpstreamError(ADAPTER_ERROR, "CRS", f"({x}, {y}) in {crs} has no WGS84 position")
    return lat, lon


def from_wgs84(crs: str, lat: float, lon: float) -> tuple[float, float]:
    """(x, y) in ``crs`` of a WGS84 latitude/longitude."""
    if crs == WGS84:
        return float(lon), float(lat)
    x, y = _transformer(WGS84, crs).transform(float(lon), float(lat))
    return x, y


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def number(value: Any) -> float | None:
    """A coordinate as upstreams send it (number, numeric string, blank or "-") → float | None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(str(value).strip().replace(",", ""))
    except ValueError:
        return None
    return f if math.isfinite(f) else None
