"""One moving checkout works out each dependency's state at most 3 times and loads the
manifest once: the no-op's look is handed to the full command, the post-check's is the
CMake stamp (counted in-process through the console script's own entry point)."""

from __future__ import annotations

import collections
import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

import qola
from qola import manifest as manifest_module
from qola.sync import observe as observe_module
from tests.repos import head

COUNTED = {"observe": (observe_module, "observe"), "manifest load": (manifest_module, "load")}


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """How often each COUNTED function runs, wherever a module holds it (its own copy from
    `from qola.sync.observe import observe` included)."""
    for info in pkgutil.walk_packages(qola.__path__, "qola."):
        importlib.import_module(info.name)  # every copy is made before it is replaced
    found: collections.Counter[str] = collections.Counter()
    for label, (module, name) in COUNTED.items():
        real = getattr(module, name)

        def counted(*args: object, _real=real, _label=label, **kwargs: object) -> object:
            found[_label] += 1
            return _real(*args, **kwargs)

        for held in [m for n, m in sys.modules.items() if n.startswith("qola")]:
            for attr, value in list(vars(held).items()):
                if value is real:
                    monkeypatch.setattr(held, attr, counted)
    return found


def run_console_script(monkeypatch: pytest.MonkeyPatch, root: Path, *args: str) -> int:
    """`qola ARGS` in root as the console script runs it: the no-op first, then click."""
    from qola.__main__ import main

    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "argv", ["qola", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0)


def test_a_moving_checkout_observes_at_most_3_times_and_loads_the_manifest_once(
    behind_pin, upstream, counts, monkeypatch, capsys
):
    assert run_console_script(monkeypatch, behind_pin.root, "checkout") == 0
    assert head(behind_pin.lib) == upstream.lib_tip  # it did move
    assert capsys.readouterr().out.startswith(f"lib 3rdparty/lib {upstream.lib_tip[:12]} ")
    assert counts["observe"] <= 3, counts
    assert counts["manifest load"] == 1, counts


def test_a_moving_checkout_for_cmake_stamps_from_what_it_observed(
    behind_pin, upstream, counts, monkeypatch, tmp_path
):
    results = tmp_path / "results.cmake"
    code = run_console_script(monkeypatch, behind_pin.root, "checkout", "--cmake-out",
                              str(results))  # fmt: skip
    assert code == 0
    assert head(behind_pin.lib) == upstream.lib_tip
    assert counts["observe"] <= 3, counts
    assert counts["manifest load"] == 1, counts
    # The stamp made from the run's own observations is the one a fresh look proves now.
    from qola.output import cmake_results
    from qola.sync import at_pin

    loaded = manifest_module.load(behind_pin.manifest)
    fresh = at_pin.proven(loaded, loaded.deps)
    assert fresh.entries is not None
    assert _stamp_lines(results.read_text()) == _stamp_lines(
        cmake_results.render(
            [cmake_results.CMakeResult("lib", upstream.lib_tip, behind_pin.lib)], loaded, fresh
        )
    )


def _stamp_lines(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.startswith("set(_QOLA_STAMP_")]
    assert lines, text
    return sorted(lines)


def test_a_manifest_edited_after_the_noop_looked_is_loaded_again(
    behind_pin, upstream, counts, monkeypatch, capsys
):
    """Between the no-op's look and the full command, the pin goes back to what is checked
    out: the full command reads the edit (nothing to move), not the no-op's manifest."""
    from qola import noop

    real = noop.answer

    def edited_meanwhile(argv: list[str]) -> object:
        handoff = real(argv)
        assert handoff is not None  # it loaded the manifest and looked
        behind_pin.set_pin(upstream.lib_tip, upstream.lib_v2)
        return handoff

    monkeypatch.setattr(noop, "answer", edited_meanwhile)
    assert run_console_script(monkeypatch, behind_pin.root, "checkout") == 0
    assert head(behind_pin.lib) == upstream.lib_v2  # not moved to the no-op's pin
    assert capsys.readouterr().out == f"lib 3rdparty/lib {upstream.lib_v2[:12]} up to date\n"
    assert counts["manifest load"] == 2, counts


def test_a_handoff_is_taken_for_the_same_manifest_and_root_only(pinned_clean, monkeypatch):
    import dataclasses

    from qola.commands import session
    from qola.sync import at_pin

    loaded = manifest_module.load(pinned_clean.manifest)
    handoff = at_pin.Handoff(loaded, None, {})
    common = session.Common(pinned_clean.manifest, None, "", False, False, ())
    assert session._handed_over(common, handoff) is handoff
    other_root = dataclasses.replace(common, root=pinned_clean.root)
    assert session._handed_over(other_root, handoff) is None
    other_manifest = dataclasses.replace(common, manifest=pinned_clean.root / "other.toml")
    assert session._handed_over(other_manifest, handoff) is None
    monkeypatch.setenv("GIT_DIR", str(pinned_clean.root / ".git"))  # the no-op read with it
    assert session._handed_over(common, handoff) is None
