"""The breaking-change gate: `ummaya check --against REF` (a lock file or a git ref)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ummaya.ci.breaking import Break, breaking_changes, current_interfaces, load_reference

from tests.codegen.project import GOV24, KAKAO, NMC, edit, run


@pytest.fixture
def old_lock(built, tmp_path):
    path = tmp_path / "old.lock"
    shutil.copy(built / "generated/registry.lock", path)
    return path


def breaks(built, old_lock) -> list[Break]:
    new, problems = current_interfaces(built)
    assert problems == []
    return breaking_changes(load_reference(built, str(old_lock))["adapters"], new)


def test_no_change_no_break(built, old_lock):
    assert breaks(built, old_lock) == []


def test_removing_an_adapter_breaks(built, old_lock):
    (built / GOV24).unlink()
    edit(built / NMC, "belongs_to: gov24_move_in_report", "belongs_to: null")
    assert breaks(built, old_lock) == [Break("gov24_move_in_report", "removed", "adapter removed (was 1.0.0)")]


def test_removing_an_output_field_breaks_unless_major_bump(built, old_lock):
    edit(built / NMC, "          phone: {type: [string, \"null\"]}\n", "")
    edit(built / NMC, "    phone: dutyTel1\n", "")
    (b,) = breaks(built, old_lock)
    assert (b.adapter_id, b.kind) == ("nmc_emergency_rooms", "output_removed")
    assert "items[].phone" in b.detail and "1.0.0 -> 1.0.0" in b.detail
    edit(built / NMC, "version: 1.0.0", "version: 1.1.0")
    assert [x.kind for x in breaks(built, old_lock)] == ["output_removed"]  # a minor bump is not enough
    edit(built / NMC, "version: 1.1.0", "version: 2.0.0")
    assert breaks(built, old_lock) == []


def test_adding_a_required_input_breaks_unless_major_bump(built, old_lock):
    edit(built / NMC, "required: [latitude, longitude]", "required: [latitude, longitude, limit]")
    assert breaks(built, old_lock) == [
        Break("nmc_emergency_rooms", "required_added", "required input(s) added without a major version bump (1.0.0 -> 1.0.0): limit")
    ]
    edit(built / NMC, "version: 1.0.0", "version: 2.0.0")
    assert breaks(built, old_lock) == []


def _rename_kakao(built, new_id: str, version: str | None = None) -> None:
    src = built / KAKAO
    dest = src.with_name(f"{new_id}.yaml")
    src.rename(dest)
    edit(dest, "id: kakao_keyword_search", f"id: {new_id}")
    if version:
        edit(dest, "version: 1.0.0", f"version: {version}")
    (built / "registry/kakao/fixtures/kakao_keyword_search").rename(built / f"registry/kakao/fixtures/{new_id}")
    edit(built / NMC, "belongs_to: kakao_keyword_search", f"belongs_to: {new_id}")


def test_renaming_an_id_breaks_unless_major_bump(built, old_lock):
    _rename_kakao(built, "kakao_place_search")
    assert breaks(built, old_lock) == [
        Break("kakao_keyword_search", "renamed", "renamed to 'kakao_place_search' without a major version bump (1.0.0 -> 1.0.0)")
    ]


def test_renaming_with_major_bump_is_allowed(built, old_lock):
    _rename_kakao(built, "kakao_place_search", "2.0.0")
    assert breaks(built, old_lock) == []


def _require_limit(built) -> None:
    edit(built / NMC, "required: [latitude, longitude]", "required: [latitude, longitude, limit]")
    edit(built / NMC, "request: {latitude: 35.1167, longitude: 128.9680}\n", "request: {latitude: 35.1167, longitude: 128.9680, limit: 5}\n")


def test_check_against_a_lock_file_prints_each_break(built, old_lock):
    _require_limit(built)
    edit(built / NMC, "          phone: {type: [string, \"null\"]}\n", "")
    edit(built / NMC, "    phone: dutyTel1\n", "")
    path = built / NMC
    path.write_text(re.sub(r"phone: [0-9-]+, ", "", path.read_text()))  # and from the fixtures' expected
    # The answer templates name the field too: the template gate refuses the build until they don't.
    result = run("build", "--root", str(built), "-q")
    assert result.exit_code == 1 and "render.ko (answer template of nmc_emergency_rooms): fails on fixture" in result.stderr
    edit(built / NMC, "{% if h.phone %}, ☎ {{ h.phone }}{% endif %}", "")
    edit(built / NMC, "{% if h.phone %}, tel {{ h.phone }}{% endif %}", "")
    assert run("build", "--root", str(built), "-q").exit_code == 0
    result = run("check", "--root", str(built), "--against", str(old_lock))
    assert result.exit_code == 1
    assert "breaking: 2 breaking change(s)" in result.stderr
    assert "  nmc_emergency_rooms: output_removed: output field(s) removed without a major version bump (1.0.0 -> 1.0.0): items[].phone" in result.stderr
    assert "  nmc_emergency_rooms: required_added: " in result.stderr
    assert "check failed: breaking" in result.stderr


def test_check_against_a_git_ref(built):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=built, check=True)
    subprocess.run([*git, "add", "."], cwd=built, check=True)
    subprocess.run([*git, "commit", "-qm", "release"], cwd=built, check=True)
    edit(built / NMC, "version: 1.0.0", "version: 2.0.0")
    _require_limit(built)
    (built / GOV24).unlink()
    edit(built / NMC, "belongs_to: gov24_move_in_report", "belongs_to: null")
    assert run("build", "--root", str(built), "-q").exit_code == 0
    result = run("check", "--root", str(built), "--against", "HEAD")
    assert result.exit_code == 1
    assert "breaking: 1 breaking change(s) against HEAD\n  gov24_move_in_report: removed: adapter removed (was 1.0.0)" in result.stderr
    bad = run("check", "--root", str(built), "--against", "no-such-ref")
    assert bad.exit_code == 2 and "neither a lock file nor a git ref" in bad.stderr
