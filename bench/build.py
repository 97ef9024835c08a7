"""Build benchmark: the real registry, a synthetic 1,000-adapter registry, and a no-op rebuild.

    python bench/build.py [--adapters 1000] [--keep]

Everything happens in temporary folders with cold emit caches, so the repository's generated/ is
never touched. The synthetic registry is made from the real manifests (ids, titles, hints and
examples varied per copy, fixtures copied alongside) and deleted afterwards unless --keep.
Targets on a 2-core machine: real ≤ 5 s, 1,000 adapters ≤ 60 s, no-op ≤ 1 s.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ummaya.codegen import builder as b
from ummaya.codegen.emit_cache import Cache
from ummaya.codegen.loader import manifest_paths
from ummaya.paths import require_root

HINT_WORDS_KO = ["근처", "지금", "우리 동네", "가까운", "오늘", "빨리", "어디", "알려줘"]
HINT_WORDS_EN = ["near me", "now", "closest", "today", "quickly", "where", "show me", "local"]


def _dump(doc: dict) -> str:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: generating 1,000 files fast
    return yaml.dump(doc, Dumper=dumper, allow_unicode=True, sort_keys=False)


def _linkable(doc: dict, ids: set[str]) -> dict:
    # Copies must link on their own: references to adapters not in the set become "nothing serves it".
    for neg in doc.get("negative_examples") or []:
        if neg.get("belongs_to") not in ids:
            neg["belongs_to"] = None
    return doc


def copy_real(src_root: Path, dest: Path) -> Path:
    shutil.copytree(src_root / "registry", dest / "registry", ignore=shutil.ignore_patterns("scenarios"))
    paths = manifest_paths(dest)
    ids = {p.stem for p in paths}
    for p in paths:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        p.write_text(_dump(_linkable(doc, ids)), encoding="utf-8")
    return dest


def synthesize(src_root: Path, dest: Path, count: int) -> Path:
    reg = dest / "registry"
    # Every shared-data folder (profiles, slot types, vocabularies …), not only the profiles: the
    # copies' x-slot names must resolve as the originals' do.
    for shared in sorted((src_root / "registry").iterdir()):
        if shared.is_dir() and shared.name.startswith("_"):
            shutil.copytree(shared, reg / shared.name)
    sources = []
    for p in manifest_paths(src_root):
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        sources.append((p, doc))
    if not sources:
        raise SystemExit("no manifests under registry/ to synthesize from")
    new_ids = [f"{doc['id'][:56]}_{n:04d}" for n in range(count) for _, doc in [sources[n % len(sources)]]]
    ids = set(new_ids)
    for n, new_id in enumerate(new_ids):
        path, doc = sources[n % len(sources)]
        doc = copy.deepcopy(doc)
        old_id = doc["id"]
        doc["id"] = new_id
        doc["title"] = {k: f"{v} {n}" for k, v in doc["title"].items()}
        doc["search_hints"]["ko"] = [*doc["search_hints"]["ko"], f"{HINT_WORDS_KO[n % 8]} {n}"]
        doc["search_hints"]["en"] = [*doc["search_hints"]["en"], f"{HINT_WORDS_EN[n % 8]} {n}"]
        doc["examples"]["ko"] = [f"{e} ({n})" for e in doc["examples"]["ko"]]
        doc["examples"]["en"] = [f"{e} ({n})" for e in doc["examples"]["en"]]
        for neg in doc.get("negative_examples") or []:
            target = neg.get("belongs_to")
            neg["belongs_to"] = f"{target[:56]}_{(n - n % len(sources)) + [d['id'] for _, d in sources].index(target):04d}" if target in {d["id"] for _, d in sources} else None
        _linkable(doc, ids)
        agency = path.parent.name
        out = reg / agency / f"{new_id}.yaml"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_dump(doc), encoding="utf-8")
        fixtures = path.parent / "fixtures" / old_id
        if fixtures.is_dir():
            shutil.copytree(fixtures, reg / agency / "fixtures" / new_id)
    return dest


def edit_hint(path: Path) -> None:
    """Change one Korean search hint (new words for Kiwi), as a contributor's one-line edit would."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["search_hints"]["ko"] = [*doc["search_hints"]["ko"][:-1], "새로 고친 검색어 하나"]
    path.write_text(_dump(doc), encoding="utf-8")


def cpu() -> float:
    """CPU seconds of this process and its finished children (the index and models worker interpreters): the honest
    figure on a shared machine, where wall time measures the neighbours too."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed_build(root: Path, cache: Path, label: str) -> float:
    c0 = cpu()
    result = b.build(root, cache=Cache(cache), force=True)
    used = cpu() - c0
    plan = result.plan
    if not plan.ok:
        print(f"{label}: build failed with {len(plan.problems)} problem(s); first ones:")
        for p in plan.problems[:10]:
            print(f"  {p}")
        raise SystemExit(1)
    print(f"{label}: {plan.adapters} adapters, {len(plan.outputs)} files, {result.seconds:.2f} s wall, {used:.2f} s CPU")
    return result.seconds


def noop(root: Path, cache: Path, label: str) -> tuple[float, float]:
    # The same cache the build used: it remembers the file hashes the build just wrote.
    result = b.build(root, cache=Cache(cache))
    assert result.noop, "expected a no-op"
    started = time.perf_counter()
    exe = Path(sys.executable).parent / "ummaya"
    cmd = [str(exe)] if exe.exists() else [shutil.which("ummaya") or "ummaya"]
    env = {**os.environ, "UMMAYA_CACHE": str(cache)}
    proc = subprocess.run([*cmd, "build", "--root", str(root)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if proc.returncode != 0 or not proc.stdout.startswith("up to date"):
        raise SystemExit(f"no-op CLI run failed: {proc.stdout}{proc.stderr}")
    print(f"{label}: no-op check {result.seconds:.3f} s in process; `ummaya build` {wall:.2f} s wall (with interpreter start)")
    return result.seconds, wall


def forget_kiwi() -> None:
    """Drop this process's Kiwi and its memo, so each edit pays for Kiwi as `ummaya build` (a fresh
    process) does: otherwise the second registry's hint edit would find Kiwi loaded by the first's."""
    from ummaya.model import analysis

    analysis._kiwi = None
    analysis._morph_cache.clear()
    analysis.morphs.cache_clear()


def one_edits(root: Path, cache: Path, label: str, version_of: str, hint_of: str) -> None:
    """Rebuild after one manifest's version edit, then after another's search-hint edit (new words
    for Kiwi), with the cache the previous builds filled: CPU and wall of each."""
    forget_kiwi()
    one = sorted((root / "registry").rglob(version_of))[0]
    one.write_text(one.read_text(encoding="utf-8").replace("version: 1.0.0", "version: 1.0.1", 1), encoding="utf-8")
    c0 = cpu()
    inc = b.build(root, cache=Cache(cache))
    print(f"incremental rebuild after editing one manifest's version, {label}: {inc.seconds:.2f} s wall, {cpu() - c0:.2f} s CPU")
    edit_hint(sorted((root / "registry").rglob(hint_of))[0])
    forget_kiwi()
    c0 = cpu()
    inc = b.build(root, cache=Cache(cache))
    print(f"incremental rebuild after editing one manifest's search hint, {label}: {inc.seconds:.2f} s wall, {cpu() - c0:.2f} s CPU (target ≤ 1)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adapters", type=int, default=1000)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folders")
    ap.add_argument("--skip-real", action="store_true", help="only the synthetic registry")
    args = ap.parse_args()
    src = require_root(None)
    tmp = Path(tempfile.mkdtemp(prefix="ummaya-bench-"))
    try:
        t_real = float("nan")
        if not args.skip_real:
            real = copy_real(src, tmp / "real")
            t_real = timed_build(real, tmp / "cache-real", "full build, real registry (cold cache)")
            noop(real, tmp / "cache-real", "no-op rebuild, real registry")
            paths = manifest_paths(real)
            one_edits(real, tmp / "cache-real", "real registry", paths[0].name, paths[1].name)
        synth = synthesize(src, tmp / "synthetic", args.adapters)
        t_synth = timed_build(synth, tmp / "cache-synth", f"full build, synthetic {args.adapters} adapters (cold cache)")
        n_inproc, n_wall = noop(synth, tmp / "cache-synth", f"no-op rebuild, synthetic {args.adapters}")
        one_edits(synth, tmp / "cache-synth", "synthetic", "*_0001.yaml", "*_0002.yaml")
        c0 = cpu()
        again = b.build(synth, cache=Cache(tmp / "cache-synth"))
        assert again.noop, "expected a no-op after the incremental build"
        print(f"no-op after it, synthetic: {again.seconds:.3f} s wall, {cpu() - c0:.3f} s CPU in process")
        print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        print()
        print(f"targets: real {t_real:.2f} s (≤ 5), synthetic {t_synth:.2f} s (≤ 60), no-op {n_wall:.2f} s wall (≤ 1)")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
