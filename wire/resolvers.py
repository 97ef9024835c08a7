"""Shared resolvers for ``Upstream.derived_params`` (expression ``resolver.field``).

Each resolver sees the adapter arguments (defaults applied) and an injectable clock, so forecast
bases are testable at any instant. Every KMA time is computed in KST (UTC+9, no DST).

- ``kma_grid.nx`` / ``kma_grid.ny``: the KMA 5 km forecast grid cell of ``latitude``/``longitude``
  by the Lambert conformal conic KMA publishes (Earth radius 6371.00877 km, standard parallels
  30°/60°, origin 126°E 38°N at cell (43, 136)).
- ``kma_base.date`` / ``.time``: the latest short-term forecast base (0200, 0500, … 2300) already
  published; a base appears about 10 minutes after its hour, so 02:09 still uses yesterday's 2300.
- ``upstream.issue_time`` (declared, no resolver name): ``latest_issue`` over the manifest's issue
  hours, minute and publication delay, each parameter in its own format (getUltraSrtFcst base HH30
  callable from HH45; 중기예보 tmFc 0600/1800; 생활기상지수 time as YYYYMMDDHH).
- ``kma_nowcast.date`` / ``.time``: the latest HH00 observation, callable from HH:10 (KMA guide
  of 2024-11-28; older guides said HH:40, which served answers up to 30 minutes staler).
- ``today.yyyymmdd`` / ``.yyyymm`` / ``.yyyy`` / ``.mm``, ``days_ago_7.yyyymmdd``: KST calendar dates.
- ``last_year.yyyy``: the KST year before today's — the latest complete year of an annual
  disclosure (대학알리미 publishes a year's figures during that year; the year before is complete).
- ``input_or_today.year`` / ``.month``: the ``year``/``month`` input when given, else today's.
- ``near_box.south`` / ``.north`` / ``.west`` / ``.east``: a WGS84 box reaching 2.5 km from the
  ``latitude``/``longitude`` inputs each way (safetydata.go.kr shelter sets filter by
  startLat/endLat/startLot/endLot), so an ``after.nearest`` of up to 2 km sees every record near.

Each is one function registered with ``@resolver(name, fields=…)`` at the end of this module; a new
resolver is one more (docs/CONTRIBUTING.md), and the build rejects an expression nobody registered.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .extensions import Registry

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

ISSUE_FORMATS = {"yyyymmdd": "%Y%m%d", "hhmm": "%H%M", "hh": "%H", "yyyymmddhh": "%Y%m%d%H", "yyyymmddhhmm": "%Y%m%d%H%M"}


def latest_issue(
    now: dt.datetime, *, hours: Sequence[int] = tuple(range(24)), minute: int = 0, ready_after_min: int = 0
) -> dt.datetime:
    """The newest issue (``hours`` × ``minute``, KST) already callable ``ready_after_min`` after it.

    The declared ``upstream.issue_time`` of a manifest (model.manifest.IssueTime) and the named KMA
    bases below are all this one rule."""
    t = kst(now)
    ready = dt.timedelta(minutes=ready_after_min)
    day = t.replace(hour=0, minute=0, second=0, microsecond=0)
    for back in range(0, 3 + ready_after_min // 1440):
        d = day - dt.timedelta(days=back)
        for hour in sorted(hours, reverse=True):
            issue = d.replace(hour=hour, minute=minute)
            if issue + ready <= t:
                return issue
    raise UpstreamError(ADAPTER_ERROR, "RESOLVER", "issue_time: no issue in the last days")  # unreachable for valid specs


def issue_params(spec: Any, now: dt.datetime) -> dict[str, str]:
    """``upstream.issue_time`` → {parameter: the latest issue written in its format}."""
    issue = latest_issue(now, hours=spec.hours, minute=spec.minute, ready_after_min=spec.ready_after_min)
    return {name: issue.strftime(ISSUE_FORMATS[fmt]) for name, fmt in spec.params.items()}


_FORECAST_HOURS = (2, 5, 8, 11, 14, 17, 20, 23)
FORECAST_READY_MINUTE = 10  # 단기예보 base HH00 is callable from about HH:10
NOWCAST_READY_MINUTE = 10  # 초단기실황 HH00 is callable from HH:10 (KMA guide, 2024-11-28)


def kma_forecast_base(now: dt.datetime) -> tuple[str, str]:
    issue = latest_issue(now, hours=_FORECAST_HOURS, ready_after_min=FORECAST_READY_MINUTE)
    return issue.strftime("%Y%m%d"), issue.strftime("%H%M")


def kma_nowcast_base(now: dt.datetime) -> tuple[str, str]:
    issue = latest_issue(now, ready_after_min=NOWCAST_READY_MINUTE)
    return issue.strftime("%Y%m%d"), issue.strftime("%H%M")


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


# -- the registry: one decorated function per resolver (wire/extensions.py) ------------------

Resolver = Callable[[str, Mapping[str, Any], dt.datetime], str]
RESOLVERS: Registry[Resolver] = Registry("resolver")


def resolver(name: str, *, fields: tuple[str, ...], doc: str | None = None) -> Callable[[Resolver], Resolver]:
    """Register ``fn(field, args, now) -> str`` for the expressions ``name.<field>`` in ``fields``."""
    meta: dict[str, Any] = {"fields": tuple(fields)}
    if doc:
        meta["doc"] = doc
    return RESOLVERS.register(name, **meta)


def resolver_expressions() -> tuple[str, ...]:
    """Every ``name.field`` a manifest's ``upstream.derived_params`` may use."""
    return tuple(f"{name}.{f}" for name in RESOLVERS for f in RESOLVERS.meta(name)["fields"])


def resolve(expr: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    """Value of one ``resolver.field`` expression, as the upstream wants it (a string)."""
    name, _, field = expr.partition(".")
    fn = RESOLVERS.get(name)
    if fn is None or field not in RESOLVERS.meta(name)["fields"]:
        raise UpstreamError(ADAPTER_ERROR, "RESOLVER", f"unknown derived parameter expression '{expr}'")
    return fn(field, args, now)


@resolver("kma_grid", fields=("nx", "ny"), doc="KMA 5 km forecast grid cell of the latitude/longitude inputs.")
def _kma_grid_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    nx, ny = kma_grid(*_coordinates(args, f"kma_grid.{field}"))
    return str(nx if field == "nx" else ny)


@resolver("kma_base", fields=("date", "time"), doc="Latest published KMA short-term forecast base (YYYYMMDD, HHMM).")
def _kma_base_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    base = kma_forecast_base(now)
    return base[0] if field == "date" else base[1]


@resolver("kma_nowcast", fields=("date", "time"), doc="Latest published KMA nowcast observation (YYYYMMDD, HH00).")
def _kma_nowcast_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    base = kma_nowcast_base(now)
    return base[0] if field == "date" else base[1]


@resolver("today", fields=("yyyymmdd", "yyyymm", "yyyy", "mm"), doc="Today's KST date: 20261201, 202612, 2026 or 12.")
def _today_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    return kst(now).strftime({"yyyymmdd": "%Y%m%d", "yyyymm": "%Y%m", "yyyy": "%Y", "mm": "%m"}[field])


@resolver("days_ago_7", fields=("yyyymmdd",), doc="The KST date seven days ago (a week-long window's start).")
def _days_ago_7_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    return (kst(now) - dt.timedelta(days=7)).strftime("%Y%m%d")


@resolver("last_year", fields=("yyyy",), doc="The KST year before today's (an annual disclosure's latest complete year): 2025 in 2026.")
def _last_year_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    return str(kst(now).year - 1)


@resolver("input_or_today", fields=("year", "month"), doc="The year or month input the citizen gave, else today's (KST): 2026, 05.")
def _input_or_today_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    value = args.get(field)
    if value not in (None, ""):
        return f"{int(value):02d}" if field == "month" else str(value)
    return kst(now).strftime("%Y" if field == "year" else "%m")


@resolver(
    "law_jo",
    fields=("code",),
    doc="법제처 DRF lawService JO: the article input as 6 digits, the article's number in 4 and its "
        "branch (article_branch, 의N) in 2 — 3 → 000300, 10 with branch 2 → 001002; empty (not sent) "
        "without an article.",
)
def _law_jo_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    article = str(args.get("article") or "").strip()
    if not article:
        return ""
    branch = str(args.get("article_branch") or "0").strip()
    if not (article.isdigit() and branch.isdigit() and len(article) <= 4 and len(branch) <= 2):
        raise UpstreamError(ADAPTER_ERROR, "RESOLVER", f"law_jo.code: article {article!r} / branch {branch!r} "
                            "are not a 4-digit article and a 2-digit branch")
    return f"{int(article):04d}{int(branch):02d}"


NEAR_BOX_KM = 2.5
_KM_PER_DEGREE_LAT = 111.32


def near_box(latitude: float, longitude: float, km: float = NEAR_BOX_KM) -> dict[str, float]:
    """The WGS84 box reaching ``km`` from a point each way (south, north, west, east)."""
    dlat = km / _KM_PER_DEGREE_LAT
    dlon = km / (_KM_PER_DEGREE_LAT * max(math.cos(math.radians(latitude)), 1e-6))
    return {"south": latitude - dlat, "north": latitude + dlat, "west": longitude - dlon, "east": longitude + dlon}


@resolver(
    "near_box",
    fields=("south", "north", "west", "east"),
    doc="Edges of a WGS84 box reaching 2.5 km from the latitude/longitude inputs (6 decimals).",
)
def _near_box_param(field: str, args: Mapping[str, Any], now: dt.datetime) -> str:
    return f"{near_box(*_coordinates(args, f'near_box.{field}'))[field]:.6f}"


RESOLVER_EXPRESSIONS = resolver_expressions()
