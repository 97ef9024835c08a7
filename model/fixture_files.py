"""Which files a fixture is: the names a Mock call reads beside a fixture's body (a chained step's,
a lookup's, page N's). One contract for the build (which copies exactly these files into
``generated/fixtures/``) and the runtime's Mock transport (which reads them)."""

from __future__ import annotations

from pathlib import Path

from .manifest import Fixture, Manifest


def step_fixture_name(response: str, step_id: str) -> str:
    """``hadan.json`` + step ``hospital`` → ``hadan.hospital.json``: the body Mock answers that
    step's request with."""
    p = Path(response)
    return str(p.with_name(f"{p.stem}.{step_id}{p.suffix}"))


def lookup_fixture_name(response: str) -> str:
    """``hadan.json`` → ``hadan.lookup.json``: the body Mock answers a lookup request with."""
    return step_fixture_name(response, "lookup")


def page_fixture_name(response: str, page: int) -> str:
    """``seoul.json`` → ``seoul.page2.json``: the body Mock answers page 2 with."""
    return step_fixture_name(response, f"page{page}")


def fixture_files(manifest: Manifest, fixture: Fixture, folder: Path) -> list[str]:
    """Every file under ``folder`` (fixtures/<adapter_id>/) a Mock call with ``fixture`` reads —
    what the build must copy to generated/fixtures/<adapter_id>/."""
    if fixture.response is None:
        return []
    files = [fixture.response]
    if manifest.upstream is None:
        return files
    for step in manifest.upstream.chain():
        side = step_fixture_name(fixture.response, step.id)
        if (folder / side).is_file():
            files.append(side)
    paging = manifest.upstream.paging
    for n in range(2, (paging.max_pages if paging else 1) + 1):
        side = page_fixture_name(fixture.response, n)
        if not (folder / side).is_file():
            break
        files.append(side)
    return files
