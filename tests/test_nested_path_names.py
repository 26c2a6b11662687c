"""A nested submodule whose path is no ref name (a space, a leading dot): --force's backup and
the repair after a kill name their refs from it, and must still save, and finish."""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import gitpause
import procs
import pytest
from repos import commit_file, git, head, init_repo

from qola.repo import store

EDIT = "an edit of mine\n"


@dataclass(frozen=True)
class Odd:
    root: Path
    nested: Path  # the nested submodule's folder in the checked-out dependency
    lib_v1: str
    lib_v2: str
    nested_v2: str

    @property
    def manifest(self) -> Path:
        return self.root / "qola.toml"

    def pin_v2(self) -> None:
        self.manifest.write_text(self.manifest.read_text().replace(self.lib_v1, self.lib_v2))


def odd_project(base: Path, path: str) -> Odd:
    """lib with a nested submodule at path, moved from n1 to n2 by lib's v2; a project
    pinning lib at v1, checked out."""
    nested = init_repo(base / "nested")
    n1 = commit_file(nested, "n.txt", "n1\n")
    n2 = commit_file(nested, "n.txt", "n2\n")
    lib = init_repo(base / "lib")
    commit_file(lib, "README", "lib\n")
    git(lib, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(nested), path)
    git(lib / path, "checkout", "-q", n1)
    git(lib, "add", path)
    git(lib, "commit", "-q", "-m", "nested at n1")
    v1 = head(lib)
    git(lib / path, "checkout", "-q", n2)
    git(lib, "add", path)
    v2 = commit_file(lib, "README", "lib 2\n")
    root = init_repo(base / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{lib}"\ncommit = "{v1}"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    first = procs.run("checkout", "-m", str(root / "qola.toml"))
    assert first.returncode == 0, first.stderr
    return Odd(root, root / "3rdparty" / "lib" / path, v1, v2, n2)


PATHS = ["ext/my lib", ".deps/x"]


@pytest.mark.parametrize("path", PATHS)
def test_force_saves_an_edit_in_a_nested_submodule_whose_path_is_no_ref_name(tmp_path, path):
    odd = odd_project(tmp_path, path)
    (odd.nested / "n.txt").write_text(EDIT)
    odd.pin_v2()
    res = procs.run("checkout", "--force", "-m", str(odd.manifest))
    assert res.returncode == 0, res.stderr
    assert head(odd.nested) == odd.nested_v2
    [command] = re.findall(r"restore with: (git -C .* stash apply \S+)", res.stderr)
    ref = shlex.split(command)[-1]
    assert ref.startswith(store.backup_prefix("lib") + store.ref_path(path) + "/")
    assert git(odd.nested, "show", f"{ref}:n.txt") + "\n" == EDIT
    assert shlex.split(command)[:3] == ["git", "-C", str(odd.nested)]  # quoted, pasteable


@pytest.mark.parametrize("path", PATHS)
def test_a_kill_mid_move_is_finished_with_an_edit_in_such_a_nested_submodule(
    tmp_path, path
):
    odd = odd_project(tmp_path, path)
    odd.pin_v2()
    wrapper = gitpause.make(tmp_path / "wrapper")
    killed, _ = gitpause.run_until(wrapper, 0, "checkout", "-m", str(odd.manifest),
                                   pause_on=f"checkout -q --detach {odd.nested_v2}")  # fmt: skip
    assert killed
    (odd.nested / "n.txt").write_text(EDIT)  # the user, in between
    rerun = procs.run("checkout", "-m", str(odd.manifest))
    assert rerun.returncode == 0, rerun.stderr
    assert "finishing its work" in rerun.stderr
    assert head(odd.nested) == odd.nested_v2
    [ref] = re.findall(r"stash apply (\S+)", rerun.stderr)
    assert git(odd.nested, "show", f"{ref}:n.txt") + "\n" == EDIT
    assert procs.run("verify", "-m", str(odd.manifest)).returncode == 0


def test_ref_path_keeps_plain_paths_and_encodes_every_other_byte() -> None:
    assert store.ref_path("extern/nested") == "extern/nested"
    assert store.ref_path("a/b.c") == "a/b.c"
    assert store.ref_path("ext/my lib") == "ext/my%20lib"
    assert store.ref_path(".deps/x") == "%2Edeps/x"
    assert store.ref_path("50%") == "50%25"
    odd = ["a..b", "x.", "c.lock", "@{u}", "é", "~^:?*[\\", "\x01"]
    names = {store.ref_path(p) for p in odd}
    assert len(names) == len(odd)  # no two paths share a name
    for path in odd:
        ref = store.backup_ref("lib", path)
        assert git(Path.cwd(), "check-ref-format", ref) == "", ref


LONG = "ext/" + "a b" * 60  # 180 bytes, fine for the file system; 300 as %XX


def test_force_saves_an_edit_in_a_nested_submodule_whose_encoded_path_passes_name_max(
    tmp_path,
):
    odd = odd_project(tmp_path, LONG)
    (odd.nested / "n.txt").write_text(EDIT)
    odd.pin_v2()
    res = procs.run("checkout", "--force", "-m", str(odd.manifest))
    assert res.returncode == 0, res.stderr
    assert head(odd.nested) == odd.nested_v2
    assert (odd.nested / "n.txt").read_text() == "n2\n"
    [command] = re.findall(r"restore with: (git -C .* stash apply \S+)", res.stderr)
    ref = shlex.split(command)[-1]
    assert ref.startswith(store.backup_prefix("lib") + store.ref_path(LONG) + "/")
    assert all(len(part) <= 200 for part in ref.split("/")), ref
    assert git(odd.nested, "show", f"{ref}:n.txt") + "\n" == EDIT
    # The printed command, pasted, applies it (n.txt changed from n1 to n2: a conflict).
    restored = subprocess.run(shlex.split(command), capture_output=True, text=True)
    assert "CONFLICT" in restored.stdout, restored.stderr
    assert EDIT in (odd.nested / "n.txt").read_text()


def test_ref_path_shortens_a_component_or_a_whole_too_long_for_the_file_system() -> None:
    component = "a b" * 60
    assert len(store.ref_path(component)) <= 200
    assert store.ref_path(component).startswith("a%20ba%20b")
    assert store.ref_path(component) == store.ref_path(component)  # deterministic
    # Paths that share the kept part, and one whose plain encoding looks like a cut one.
    paths = [component, component + "x", component[:-1] + "c", "d/" * 700 + "e",
             "d/" * 700 + "f", "x" * 250, "x" * 251]
    names = [store.ref_path(p) for p in paths]
    assert len(set(names)) == len(paths)
    for path, name in zip(paths, names, strict=True):
        assert all(len(part) <= 200 for part in name.split("/")), name
        assert len(name) <= 1024
        ref = store.backup_ref("lib", path)
        assert git(Path.cwd(), "check-ref-format", ref) == "", ref
    # Short ones are as before: readable, and never with the cut's mark.
    assert "%-" not in store.ref_path("x" * 200) and store.ref_path("x" * 200) == "x" * 200
