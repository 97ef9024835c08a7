"""Shared resolvers for ``Upstream.derived_params`` (expression ``resolver.field``).

Each resolver sees the adapter arguments (defaults applied) and an injectable clock, so forecast
bases are testable at any instant. Every KMA time is computed in KST (UTC+9, no DST).

- ``kma_grid.nx`` / ``kma_grid.ny``: the KMA 5 km forecast grid cell of ``latitude``/``longitude``
  by the Lambert conformal conic KMA publishes (Earth radius 6371.00877 km, standard parallels
  30°/60°, origin 126°E 38°N at cell (43, 136)).
- ``kma_base.date`` / ``.time``: the latest short-term forecast base (0200, 0500, … 2300) already
  published; a base appears about 10 minutes after its hour, so 02:09 still uses yesterday's 2300.
- ``kma_nowcast.date`` / ``.time``: the latest HH00 observation, callable from HH:10 (KMA guide
  of 2024-11-28; older guides said HH:40, which served answers up to 30 minutes staler).
- ``today.yyyymmdd``, ``days_ago_7.yyyymmdd``: KST calendar dates.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from typing import Any

from .errors import ADAPTER_ERROR, UpstreamError

KST = dt.timezone(dt.timedelta(hours=9), "KST")
Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def kst(now: dt.datetime) -> dt.datetime:
    if now.tzinfo is None:  # a naive clock is taken as UTC, never as local time of the host
        now = now.replace(tzinfo=dt.timezone.utc)
    return now.astimezone(KST)


# -- KMA grid ----------------------------------------------------------------------------------

_RE_KM, _GRID_KM = 6371.00877, 5.0
_SLAT1, _SLAT2, _OLON, _OLAT = 30.0, 60.0, 126.0, 38.0
_XO, _YO = 43, 136


def kma_grid(lat: float, lon: float) -> tuple[int, int]:
    rad = math.pi / 180.0
    re = _RE_KM / _GRID_KM
    slat1, slat2, olon, olat = _SLAT1 * rad, _SLAT2 * rad, _OLON * rad, _OLAT * rad
    sn = math.log(math.cos(slat1) / math.cos(slat2)) / math.log(
        math.tan(math.pi * 0.25 + slat2 * 0.5) / math.tan(math.pi * 0.25 + slat1 * 0.5)
    )
    sf = math.tan(math.pi * 0.25 + slat1 * 0.5) ** sn * math.cos(slat1) / sn
    ro = re * sf / math.tan(math.pi * 0.25 + olat * 0.5) ** sn
    ra = re * sf / math.tan(math.pi * 0.25 + lat * rad * 0.5) ** sn
    theta = lon * rad - olon
    if theta > math.pi:
        theta -= 2.0 * math.pi
    if theta < -math.pi:
        theta += 2.0 * math.pi
    theta *= sn
    x = math.floor(ra * math.sin(theta) + _XO + 0.5)
    y = math.floor(ro - ra * math.cos(theta) + _YO + 0.5)
    return int(x), int(y)


# -- KMA publication times ---------------------------------------------------------------------

_FORECAST_HOURS = (2, 5, 8, 11, 14, 17, 20, 23)
NOWCAST_READY_MINUTE = 10  # 초단기실황 HH00 is callable from HH:10 (KMA guide, 2024-11-28)


def kma_forecast_base(now: dt.datetime) -> tuple[str, str]:
    t = kst(now)
    for hour in reversed(_FORECAST_HOURS):
        if (t.hour, t.minute) >= (hour, 10):
            return t.strftime("%Y%m%d"), f"{hour:02d}00"
    return (t - dt.timedelta(days=1)).strftime("%Y%m%d"), "2300"


def kma_nowcast_base(now: dt.datetime) -> tuple[str, str]:
    t = kst(now)
    if t.minute < NOWCAST_READY_MINUTE:
        t -= dt.timedelta(hours=1)
    return t.strftime("%Y%m%d"), f"{t.hour:02d}00"


# -- dispatch ----------------------------------------------------------------------------------


def _coordinates(args: Mapping[str, Any], expr: str) -> tuple[float, float]:
    try:
        return float(args["latitude"]), float(args["longitude"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UpstreamError(
            ADAPTER_ERROR,
            "INVALID_ARGUMENTS",
            f"derived parameter '{expr}' needs numeric 'latitude' and 'longitude' inputs",
        ) from exc


def resolve(expr: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    """Value of one ``resolver.field`` expression, as the upstream wants it (a string)."""
    resolver, _, field = expr.partition(".")
    if resolver == "kma_grid" and field in ("nx", "ny"):
        nx, ny = kma_grid(*_coordinates(args, expr))
        return str(nx if field == "nx" else ny)
    if resolver in ("kma_base", "kma_nowcast") and field in ("date", "time"):
        base = kma_forecast_base(now) if resolver == "kma_base" else kma_nowcast_base(now)
        return base[0] if field == "date" else base[1]
    if resolver == "today" and field == "yyyymmdd":
        return kst(now).strftime("%Y%m%d")
    if resolver == "days_ago_7" and field == "yyyymmdd":
        return (kst(now) - dt.timedelta(days=7)).strftime("%Y%m%d")
    raise UpstreamError(ADAPTER_ERROR, "RESOLVER", f"unknown derived parameter expression '{expr}'")


RESOLVER_EXPRESSIONS = (
    "kma_grid.nx",
    "kma_grid.ny",
    "kma_base.date",
    "kma_base.time",
    "kma_nowcast.date",
    "kma_nowcast.time",
    "today.yyyymmdd",
    "days_ago_7.yyyymmdd",
)
