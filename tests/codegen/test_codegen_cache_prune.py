"""The build cache prunes what no build uses any more (codegen/emit_cache.py): an edited manifest's
old entries and an older generator's go after ``UMMAYA_CACHE_MAX_AGE_DAYS``; what a build reads is
kept (a hit refreshes its entry), and a pruned cache still builds the same bytes."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ummaya.codegen import builder as b
from ummaya.codegen import emit_cache
from ummaya.codegen.emit_cache import Cache, maybe_prune, prune

from tests.codegen.project import KAKAO, edit, outputs

DAY = 86_400


def entries(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.glob("*/??/*") if p.is_file()}


def age(folder: Path, days: float) -> None:
    """Every entry (and the prune stamp) as if last used ``days`` ago."""
    then = time.time() - days * DAY
    for p in folder.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))


def test_prune_removes_old_entries_only(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    cache.put("models", "ab" + "0" * 62, {"x": b"1"})
    cache.put("models", "cd" + "1" * 62, {"x": b"2"})
    (tmp_path / "c" / "stat").mkdir()
    (tmp_path / "c" / "stat" / "memo.json").write_text("{}")
    age(tmp_path / "c", 30)
    cache.put("models", "ef" + "2" * 62, {"x": b"3"})  # fresh
    assert cache.get("models", "cd" + "1" * 62) == {"x": b"2"}  # a hit refreshes its entry
    assert prune(tmp_path / "c", older_than_s=14 * DAY) == 1
    assert entries(tmp_path / "c") == {f"models/cd/cd{'1' * 62}.json", f"models/ef/ef{'2' * 62}.json"}
    assert not (tmp_path / "c" / "models" / "ab").exists()  # the emptied shard went too
    assert (tmp_path / "c" / "stat" / "memo.json").exists()  # not an entry: left alone


def test_maybe_prune_runs_at_most_once_a_day(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    cache.put("models", "ab" + "0" * 62, {"x": b"1"})
    age(tmp_path / "c", 30)
    maybe_prune(tmp_path / "c")  # no stamp yet: prunes, stamps
    assert entries(tmp_path / "c") == set()
    cache.put("models", "ab" + "0" * 62, {"x": b"1"})
    age(tmp_path / "c" / "models", 30)
    assert maybe_prune(tmp_path / "c") == 0  # pruned less than a day ago
    assert entries(tmp_path / "c")


def test_a_build_prunes_stale_entries_and_keeps_what_it_uses(project, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    cache = Cache(folder)
    assert b.build(project, cache=cache, force=True).plan.ok
    first = entries(folder)
    edit(project / KAKAO, "  ko: [장소 검색, ", "  ko: [새로 고친 검색어 하나, 장소 검색, ")
    age(folder, 30)  # a month later: every entry (and the stamp) last used then
    monkeypatch.setattr(emit_cache, "USED_REFRESH_S", 0.0)  # hit refreshes at once (no waiting a day)
    result = b.build(project, cache=cache)
    assert result.plan.ok, result.plan.problems
    after = entries(folder)
    gone = first - after
    # The edited adapter's old entries went; the unchanged adapters' entries, read by this build, stayed.
    # The edited adapter's old state went; the unchanged adapters' states, read by this build, stayed
    # (the parts a state supersedes are no longer read, so they went with the rest).
    states = {e for e in first if e.startswith("adapter/")}
    assert len(states) == 3 and len(states & after) == 2
    assert gone
    assert after - first  # the edit's new entries
    again = b.build(project, cache=cache, force=True)  # from the pruned cache
    assert again.plan.ok
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    import shutil

    shutil.copytree(project / "registry", fresh / "registry")
    b.build(fresh, cache=Cache(tmp_path / "empty"), force=True)
    assert outputs(project) == outputs(fresh)


def test_the_stat_memo_forgets_deleted_files(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x")
    g = tmp_path / "b.txt"
    g.write_text("y")
    hashes = emit_cache.FileHashes(tmp_path, tmp_path / "c")
    hashes.hash(str(f))
    hashes.hash(str(g))
    hashes.save()
    g.unlink()
    again = emit_cache.FileHashes(tmp_path, tmp_path / "c")
    again.hash(str(f))
    again.dirty = True
    again.save()
    assert set(emit_cache.FileHashes(tmp_path, tmp_path / "c").entries) == {str(f)}
