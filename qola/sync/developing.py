"""A dependency being developed (`qola develop NAME`): the one line every command says of it.

What the mode is and how it differs from an override: docs/developing.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qola.base.plural import count
from qola.gitrun import queries
from qola.repo import gitfiles

if TYPE_CHECKING:
    from qola.gitrun.git import Runner
    from qola.sync.observe import DepState


# What ends the mode, for every message that names it.
ENDING = "`qola develop --end {name}` brings the pin back; `qola freeze {name}` pins what is there"


def words(runner: Runner, state: DepState) -> str:
    """`developing at 1a2b3c4, 2 commits ahead of the pin`: where HEAD is, against the pin."""
    dep = state.dep
    if state.gitdir is None:
        return f"developing, but {dep.path} holds no repository"
    if state.head is None:
        return "developing, at no commit (HEAD names none)"
    at = f"developing at {state.head[:7]}"
    if state.head == dep.commit:
        return f"{at}, at the pin"
    if not queries.has_commit(runner, state.worktree, dep.commit):
        return f"{at}; the pin {dep.commit[:7]} is not in its repository"
    found = queries.ahead_behind(runner, state.worktree, dep.commit, "HEAD")
    shallow = gitfiles.is_shallow(state.gitdir)
    if found is None or (shallow and found[1] and found[0]):
        return f"{at}, not the pin {dep.commit[:7]}"
    ahead, behind = found
    if ahead and behind:
        return f"{at}, {count(ahead, 'commit')} ahead of and {behind} behind the pin"
    if ahead:
        return f"{at}, {count(ahead, 'commit')} ahead of the pin"
    return f"{at}, {count(behind, 'commit')} behind the pin"
