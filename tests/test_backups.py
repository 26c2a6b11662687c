"""`--force` saves: every save gets a ref of its own, and the printed command restores it."""

from __future__ import annotations

import re

from repos import git

from qola.repo import store

MOVES = 10


def test_many_force_moves_within_a_second_keep_every_edit_recoverable(
    pinned_clean, upstream, run_qola
):
    pins = [upstream.lib_tip, upstream.lib_v2]
    restores: list[tuple[str, str]] = []  # (ref, the edit it must hold), as printed
    for i in range(MOVES):
        old, new = pins[(i + 1) % 2], pins[i % 2]
        pinned_clean.set_pin(old, new)
        edit = f"edit number {i}\n"
        (pinned_clean.lib / "README").write_text(edit)
        res = run_qola("checkout", "--force", "-m", str(pinned_clean.manifest))
        assert res.exit_code == 0, res.stderr
        [ref] = re.findall(r"restore with: git -C \S+ stash apply (\S+)", res.stderr)
        restores.append((ref, edit))
    listed = git(
        pinned_clean.lib, "for-each-ref", "--format=%(refname)", store.backup_prefix("lib")
    ).split()
    assert sorted(listed) == sorted(ref for ref, _ in restores)
    assert len(set(listed)) == MOVES  # one ref per save, none replaced
    for ref, edit in restores:
        assert git(pinned_clean.lib, "show", f"{ref}:README") + "\n" == edit
    # The printed command itself brings the edit back.
    ref, edit = restores[0]
    git(pinned_clean.lib, "stash", "apply", "-q", ref)
    assert (pinned_clean.lib / "README").read_text() == edit


def test_a_backup_ref_that_exists_is_never_replaced(pinned_clean, upstream):
    from qola.base.errors import GitError
    from qola.gitrun.git import Runner
    from qola.sync.refs import save

    ref = store.backup_ref("lib")
    save(Runner(), pinned_clean.lib, ref, upstream.lib_v2, "lib")
    try:
        save(Runner(), pinned_clean.lib, ref, upstream.lib_v1, "lib")
    except GitError as error:
        assert "update-ref" in error.problem
    else:
        raise AssertionError("a second save under the same name replaced the first")
    assert git(pinned_clean.lib, "rev-parse", ref) == upstream.lib_v2
