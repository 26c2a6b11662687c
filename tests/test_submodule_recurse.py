"""The user's `submodule.recurse = true` (a common global setting) never reaches qola's own
git commands: moves still bring nested submodules in qola's order, and --force still
saves every nested edit before anything is reset."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from repos import head
from test_kills import backups_holding

from qola.repo import store

LIB_EDIT = "my lib edit\n"
NESTED_EDIT = "my nested edit\n"


@pytest.fixture
def recursing_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's global config (the tests' isolated one) plus submodule.recurse = true."""
    import os

    config = tmp_path / "recursing.gitconfig"
    config.write_text(
        f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n[submodule]\n\trecurse = true\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return config


def repositories_of(stderr: str, step: str) -> list[Path]:
    """The folders `-v` says qola ran `git <step>` in, in order."""
    found = []
    for line in stderr.splitlines():
        if line.startswith("qola: run: git -C "):
            words = shlex.split(line.removeprefix("qola: run: "))
            if " ".join(words[3:]).startswith(step):
                found.append(Path(words[2]))
    return found


def test_checkout_move_with_submodule_recurse_brings_nested_to_new_gitlink(
    pinned_by_qola, upstream, recursing_user, run_qola
):
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.lib) == upstream.lib_v1
    assert head(pinned_by_qola.nested) == upstream.nested_v1
    assert run_qola("verify", "-m", str(pinned_by_qola.manifest)).exit_code == 0


def test_checkout_force_with_submodule_recurse_saves_the_nested_edit(
    pinned_by_qola, upstream, recursing_user, run_qola
):
    (pinned_by_qola.lib / "README").write_text(LIB_EDIT)
    (pinned_by_qola.nested / "nested.txt").write_text(NESTED_EDIT)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "--force", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    assert head(pinned_by_qola.nested) == upstream.nested_v1
    prefix = store.backup_prefix("lib")
    assert backups_holding(pinned_by_qola.lib, prefix, "README", LIB_EDIT)
    assert backups_holding(pinned_by_qola.nested, prefix + "extern/nested/", "nested.txt",
                           NESTED_EDIT)  # fmt: skip


def test_checkout_force_saves_every_repository_deepest_first_before_any_reset(
    pinned_by_qola, upstream, run_qola
):
    (pinned_by_qola.lib / "README").write_text(LIB_EDIT)
    (pinned_by_qola.nested / "nested.txt").write_text(NESTED_EDIT)
    pinned_by_qola.set_pin(upstream.lib_v2, upstream.lib_v1)
    res = run_qola("checkout", "--force", "-v", "-m", str(pinned_by_qola.manifest))
    assert res.exit_code == 0, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.startswith("qola: run: git -C ")]
    saves = [i for i, line in enumerate(lines) if " stash create" in line]
    resets = [i for i, line in enumerate(lines) if " reset -q --hard" in line]
    assert len(saves) == 2 and len(resets) == 2, lines
    assert max(saves) < min(resets), lines
    assert repositories_of(res.stderr, "stash create") == [
        pinned_by_qola.nested, pinned_by_qola.lib
    ]
    # What people read still comes in the order of the tree.
    saved = [line.split(" as ")[0] for line in res.stderr.splitlines()
             if "saved uncommitted changes of" in line]  # fmt: skip
    assert saved == [
        "qola: lib: saved uncommitted changes of 3rdparty/lib",
        "qola: lib: saved uncommitted changes of 3rdparty/lib/extern/nested",
    ]
