"""What a cold CLI start imports: the pieces kept off it stay off, and still work when asked for.

Each check runs in a fresh interpreter (sys.modules here already holds everything)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_httpx_loads_without_its_own_cli_and_the_cli_stays_importable():
    _run("""
        import sys
        from ummaya.cli import main
        main.get_command(None, "ask")          # what `ummaya ask` does before the command runs
        import httpx
        assert "rich" not in sys.modules and "pygments" not in sys.modules, sorted(sys.modules)
        assert "httpx._main" not in sys.modules    # the placeholder removed itself
        httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(204))).get("http://x.invalid")
        import httpx._main                          # the real one, for anyone who asks
        assert callable(httpx._main.main) and "rich" in sys.modules
    """)


def test_claim_patterns_compile_on_first_use_with_the_same_verdicts():
    _run("""
        from ummaya.runtime.turn import claims
        lazy = [v for v in vars(claims).values() if isinstance(v, claims._lazy)]
        assert len(lazy) > 40 and not any("_compiled" in p.__dict__ for p in lazy)
        facts = claims.build_facts([{"name": "온누리약국", "phone": "051-123-4567"}], citizen=["사하구 약국"])
        verdict = claims.check("온누리약국 051-123-4567. 다른 곳은 051-999-0000입니다.", facts)
        kinds = [r["kind"] for r in verdict.removed]
        assert kinds == ["phone"], verdict.removed
        assert any("_compiled" in p.__dict__ for p in lazy)
    """)


def test_pydantic_skips_its_entry_point_scan_unless_the_environment_says_otherwise():
    _run("""
        import os, sys
        os.environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
        from ummaya.cli import main
        main.get_command(None, "ask")
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
        from pydantic.plugin import _loader
        assert list(_loader.get_plugins()) == [] and _loader._plugins is None  # no scan happened
    """)
    _run("""
        import os
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = ""     # a user who keeps their plugins
        from ummaya.cli import main
        main.get_command(None, "ask")
        assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""
    """)
