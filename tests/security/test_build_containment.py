"""Issue 11 item 1: a manifest from a pull request reads nothing outside registry/ and the build
writes nothing outside generated/ and llms/. Every refusal is a located ``path:line`` problem."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.codegen.project import NMC, copy_project, edit, line_of, make_project, outputs, run
from ummaya.codegen.builder import write_outputs
from ummaya.codegen.loader import load_registry

SECRET = "TOP-SECRET-이웃집-비밀번호"
FX = "registry/nmc/fixtures/nmc_emergency_rooms"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("UMMAYA_CACHE", str(tmp_path_factory.mktemp("emit-cache")))
    root = make_project(tmp_path_factory.mktemp("pristine") / "proj")
    result = run("build", "--root", str(root), "-q")
    assert result.exit_code == 0, result.output
    yield root
    mp.undo()


@pytest.fixture
def built(tmp_path, pristine, monkeypatch):
    monkeypatch.setenv("UMMAYA_CACHE", str(tmp_path / "cache"))
    # The project sits one level down so "the folder above the checkout" is ours to watch.
    return copy_project(pristine, tmp_path / "checkout" / "proj")


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "outside" / "secret.xml"
    path.parent.mkdir()
    path.write_text(f"<x>{SECRET}</x>", encoding="utf-8")
    return path


def bounded(fn, seconds: float = 180.0):
    """Run ``fn`` in a thread: a hang (a FIFO, /dev/zero) fails the test instead of the suite.

    A guard against a hang, not a speed bound: a refused build of the whole registry takes 10-90 s
    on a loaded 2-core machine, and a hang never ends, so a generous deadline loses nothing.
    """
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return box["v"]


def everything_under(folder: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            p = Path(dirpath, name)
            if p.is_file() and not p.is_symlink():
                out[p.relative_to(folder).as_posix()] = p.read_bytes()
    return out


def build_refused(root: Path) -> list[str]:
    before = outputs(root)
    result = bounded(lambda: run("build", "--root", str(root), "-q"))
    assert result.exit_code == 1, result.output
    assert outputs(root) == before, "a refused build must not touch generated/ or llms/"
    assert SECRET not in result.output and SECRET not in result.stderr
    for content in everything_under(root.parent.parent).values():
        assert SECRET.encode() not in content or content == f"<x>{SECRET}</x>".encode()
    return [line for line in result.stderr.splitlines() if line.startswith("registry/")]


def test_fixture_path_climbing_out_is_refused_at_its_line(built, secret):
    rel = os.path.relpath(secret, built / FX)
    edit(built / NMC, "response: busan_saha_multi.xml", f"response: {rel}")
    problems = build_refused(built)
    line = line_of(built / NMC, f"response: {rel}")
    assert problems == [
        f"{NMC}:{line}: fixtures.0.response '{rel}': must stay inside the adapter's fixtures folder (no absolute path, no '..')"
    ]
    assert not (built.parent / "generated").exists() and not (built.parent.parent / "fixtures").exists()


def test_absolute_fixture_path_is_refused(built, secret):
    edit(built / NMC, "response: busan_saha_multi.xml", f"response: {secret}")
    problems = build_refused(built)
    assert len(problems) == 1 and problems[0].startswith(f"{NMC}:{line_of(built / NMC, 'response: /')}: fixtures.0.response")


def test_symlinked_fixture_file_out_of_registry_is_refused(built, secret):
    body = built / FX / "busan_saha_multi.xml"
    body.unlink()
    body.symlink_to(secret)
    problems = build_refused(built)
    line = line_of(built / NMC, "response: busan_saha_multi.xml")
    assert f"{NMC}:{line}: fixtures.0.response 'busan_saha_multi.xml': resolves outside registry/ (symlink to {secret})" in problems
    assert f"{FX}/busan_saha_multi.xml:1: resolves outside registry/ (symlink to {secret})" in problems


def test_symlinked_fixtures_folder_out_of_registry_is_refused(built, secret):
    folder = built / FX
    for p in folder.iterdir():
        (secret.parent / p.name).write_bytes(p.read_bytes())
        p.unlink()
    folder.rmdir()
    folder.symlink_to(secret.parent, target_is_directory=True)
    problems = build_refused(built)
    assert any(p.startswith(f"{NMC}:") and "resolves outside registry/" in p for p in problems), problems


def test_manifest_that_is_a_symlink_out_is_refused(built, tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_bytes((built / NMC).read_bytes())
    (built / NMC).unlink()
    (built / NMC).symlink_to(outside)
    problems = build_refused(built)
    assert f"{NMC}:1: resolves outside registry/ ({outside})" in problems


@pytest.mark.parametrize("special", ["dev_zero", "fifo"])
def test_fixture_that_is_a_device_or_fifo_is_refused_without_hanging(built, special):
    body = built / FX / "busan_saha_multi.xml"
    body.unlink()
    if special == "fifo":  # inside registry/, but reading it would wait for a writer forever
        os.mkfifo(body)
        why = "not a regular file (a FIFO)"
    else:  # reading it would never end
        body.symlink_to("/dev/zero")
        why = "resolves outside registry/ (symlink to /dev/zero)"
    problems = build_refused(built)
    line = line_of(built / NMC, "response: busan_saha_multi.xml")
    assert f"{NMC}:{line}: fixtures.0.response 'busan_saha_multi.xml': {why}" in problems, problems
    assert f"{FX}/busan_saha_multi.xml:1: {why}" in problems, problems


def test_stray_symlink_anywhere_under_registry_is_refused(built, secret):
    (built / "registry" / "notes.txt").symlink_to(secret)
    problems = build_refused(built)
    assert problems == [f"registry/notes.txt:1: resolves outside registry/ (symlink to {secret})"]


def test_symlink_inside_registry_is_fine(built):
    body = built / FX / "busan_saha_multi.xml"
    shared = built / "registry" / "nmc" / "shared.xml"
    shared.write_bytes(body.read_bytes())
    body.unlink()
    body.symlink_to(shared)
    registry, problems = load_registry(built)
    assert problems == [] and len(registry.manifests) == 3


def test_successful_build_writes_only_generated_and_llms(built):
    edit(built / NMC, "version: 1.0.0", "version: 1.0.1")
    parent = built.parent
    (parent / "neighbour.txt").write_text("untouched", encoding="utf-8")
    before = {k: v for k, v in everything_under(parent).items() if not k.startswith(("proj/generated/", "proj/llms/"))}
    result = run("build", "--root", str(built), "-q")
    assert result.exit_code == 0, result.output
    after = {k: v for k, v in everything_under(parent).items() if not k.startswith(("proj/generated/", "proj/llms/"))}
    assert after == before
    assert sorted(p.name for p in built.iterdir()) == ["generated", "llms", "registry"]


@pytest.mark.parametrize(
    "path", ["generated/../../escape", "generated/fixtures/x/../../../../escape", "../escape", "/tmp/escape",
             "registry/x.yaml", "generated//x", "llms"],
)
def test_write_outputs_refuses_anything_outside_its_two_folders(tmp_path, path):
    with pytest.raises(ValueError, match="outside generated/ and llms/"):
        write_outputs(tmp_path, {path: b"x", "generated/ok": b"ok"})
    assert not (tmp_path / "generated").exists() and not (tmp_path.parent / "escape").exists()


def test_scenario_file_that_is_a_symlink_out_is_refused_located(built, tmp_path):
    from ummaya.runtime.scenarios import validate_scenarios

    outside = tmp_path / "outside.yaml"
    outside.write_text("scenarios:\n  - id: leaked\n    request: 응급실\n    expect: {calls: [], stop_reason: completed}\n", encoding="utf-8")
    folder = built / "registry" / "scenarios"
    folder.mkdir(exist_ok=True)
    (folder / "evil.yaml").symlink_to(outside)
    _, problems = validate_scenarios(built, adapters=set())
    assert f"registry/scenarios/evil.yaml:1: resolves outside registry/ ({outside})" in [str(p) for p in problems]
    _, problems = load_registry(built)
    assert f"registry/scenarios/evil.yaml:1: resolves outside registry/ (symlink to {outside})" in [str(p) for p in problems]


@pytest.mark.parametrize("target", ["lock", "output"])
def test_check_never_reads_through_a_symlink_in_generated(built, target):
    """A pull request may commit generated/ too: a symlink there to /dev/zero must not hang the
    no-op check or the drift check; it is drift, and the build replaces it with a plain file."""
    victim = built / ("generated/registry.lock" if target == "lock" else "generated/catalog.json")
    victim.unlink()
    victim.symlink_to("/dev/zero")
    result = bounded(lambda: run("check", "--root", str(built)))
    assert result.exit_code != 0 and "drift" in (result.output + result.stderr)
    result = bounded(lambda: run("build", "--root", str(built), "-q"))
    assert result.exit_code == 0, result.output
    assert victim.is_file() and not victim.is_symlink()


def test_a_lock_naming_outputs_outside_is_not_followed(built):
    lock = built / "generated/registry.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    data["outputs"]["generated/../../../../dev/zero"] = "0" * 64
    lock.write_text(json.dumps(data), encoding="utf-8")
    result = bounded(lambda: run("build", "--root", str(built), "-q"))
    assert result.exit_code == 0 and "up to date" not in result.output


def test_a_registry_that_is_itself_a_symlink_is_refused(built, secret):
    """Containment is judged against registry/: were registry/ a symlink, whatever it points at
    (another checkout, the CI workspace) would count as inside. With it, a fixture next to the
    outside folder was copied into generated/."""
    import shutil

    real = secret.parent / "registry"
    shutil.move(str(built / "registry"), str(real))
    (real / FX.removeprefix("registry/") / "secret.xml").write_bytes(secret.read_bytes())  # "inside" it
    (built / "registry").symlink_to(real)
    before = outputs(built)
    result = bounded(lambda: run("build", "--root", str(built), "-q"))
    assert result.exit_code == 1, result.output
    assert outputs(built) == before
    assert "registry:1: registry/ must be a real folder of the checkout, not a symlink" in result.stderr
    _registry, problems = load_registry(built)
    assert [p.path for p in problems] == ["registry"] and not _registry.manifests
