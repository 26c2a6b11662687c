"""Submodules the way `git submodule update --init` leaves them.

The layout and who reads it: docs/submodules.md, "The layout qola makes"."""

from __future__ import annotations

import fnmatch
import os
import shutil
from glob import escape as glob_escape
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from qola.base.errors import GitError
from qola.repo import configfile, gitfiles, gitpaths, store, trail

if TYPE_CHECKING:
    from qola.gitrun.git import Runner


def is_safe_name(name: str) -> bool:
    """A submodule name git itself accepts as a folder below modules/ (no `..`, no control)."""
    # git refuses names with a `..` component (submodule.c check_submodule_name, since
    # 2.17.1, CVE-2018-11235): such a name could put the git dir anywhere.
    parts = name.replace("\\", "/").split("/")
    return bool(name) and ".." not in parts and not any(ord(c) < 32 or c == "\x7f" for c in name)


def config_file(repo: Path) -> Path | None:
    """The config file of the repository whose work tree (or git dir) is repo."""
    gitdir = gitfiles.config_dir(repo)
    if gitdir is None and is_valid_gitdir(repo):
        gitdir = repo
    return None if gitdir is None else gitfiles.common_dir(gitdir) / "config"


def is_initialised(superproject: Path, name: str, path: str | None = None) -> bool:
    """Would git count submodule `name` (at path) as initialised and active in this
    superproject?

    Git's rule (submodule.c is_tree_submodule_active): submodule.<name>.active when
    set; else the submodule.active pathspecs (`git clone --recurse-submodules` sets
    `.`), matched against path; else whether submodule.<name>.url is set. qola asks
    for the url in every case (`git submodule update` needs it). Without path, or
    with a pathspec magic qola does not read, the pathspecs count as not matching:
    an explicit submodule.<name>.active, which qola then writes, decides.
    """
    config = config_file(superproject)
    return config is not None and is_initialised_by(config, name, path)


def is_initialised_by(config: Path, name: str, path: str | None = None) -> bool:
    """is_initialised, for the superproject whose config file is config.

    Not noted for a stamp here: gitfiles.inspect, which found the superproject's git
    dir, has read and noted this file already.
    """
    entries = _parsed(config)
    if entries is None:
        return False
    url = configfile.get(entries, "submodule", name, "url")
    active = configfile.get(entries, "submodule", name, "active")
    if active is not None:
        return url is not None and _is_true(active)
    specs = [
        e.text
        for e in entries
        if e.section == "submodule" and e.subsection is None and e.key == "active"
    ]
    if specs:
        return url is not None and path is not None and _pathspecs_match(specs, path)
    return url is not None


def fetches_on_its_own(superproject: Path, name: str) -> bool:
    """True when the superproject's config says whether a fetch there recurses into
    submodule `name` (submodule.<name>.fetchRecurseSubmodules): qola writes false, and a
    value someone set is theirs. Why: docs/submodules.md, "A pull in the root fetches
    nothing for the dependencies"."""
    config = config_file(superproject)
    entries = _parsed(config) if config is not None else None
    return entries is not None and (
        configfile.get(entries, "submodule", name, "fetchrecursesubmodules") is not None
    )


def _pathspecs_match(specs: list[str], path: str) -> bool:
    """Whether git's pathspecs (relative to the top of the work tree) take in path: one
    that is not an exclusion does (all do, when there are only exclusions), and no
    exclusion does. Long magic other than exclude, top, literal and glob: no match."""
    included = False
    only_exclusions = True
    for spec in specs:
        exclude, glob, rest = False, True, spec
        if rest.startswith(":(") and ")" in rest:
            magic, _, rest = rest[2:].partition(")")
            for word in (w.strip() for w in magic.split(",") if w.strip()):
                if word == "exclude":
                    exclude = True
                elif word == "literal":
                    glob = False
                elif word not in ("top", "glob"):
                    return False
        elif rest.startswith(":"):
            rest = rest[1:]
            while rest[:1] in ("!", "^", "/"):
                exclude = exclude or rest[0] in "!^"
                rest = rest[1:]
            rest = rest.removeprefix(":")
        if _pathspec_matches(rest, path, glob):
            if exclude:
                return False
            included = True
        only_exclusions = only_exclusions and exclude
    return included or only_exclusions


def _pathspec_matches(spec: str, path: str, glob: bool) -> bool:
    spec = spec.strip("/") if spec not in ("", ".", "./") else ""
    if spec == "" or path == spec or path.startswith(spec + "/"):
        return True
    return glob and any(c in spec for c in "*?[") and fnmatch.fnmatchcase(path, spec)


# Each config (the root's, each dependency's), parsed once per run however many of its
# submodules are asked about (the no-op path asks for each dependency and each nested
# submodule); keyed by what says it has not changed.
_PARSED: dict[tuple[str, int, int], list[configfile.Entry]] = {}
_MOST_PARSED = 256


def _parsed(config: Path) -> list[configfile.Entry] | None:
    """A repository's config entries as git reads them, includes followed (None: it cannot
    be read, or not without git where git may not run). What an include brings is in no
    stamp: an answer that needed one cannot be proven."""
    try:
        info = os.stat(config)
        key = (str(config), info.st_mtime_ns, info.st_size)
        if key not in _PARSED:
            data = config.read_bytes()
            found = configfile.entries(data, str(config), includes=True)
            if found is None:
                trail.cannot_prove(f"{config}: qola reads this config exactly only with git")
                return None
            if configfile.has_include(found):
                trail.cannot_prove(f"{config}: what it includes is in no stamp")
                return found  # not kept: what it includes may change under the same stat
            if len(_PARSED) >= _MOST_PARSED:
                _PARSED.clear()
            _PARSED[key] = found
    except (OSError, configfile.UnreadableConfig):
        return None
    return _PARSED[key]


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "yes", "on", "1", "")


def initialise(runner: Runner, superproject: Path, name: str, url: str, subject: str) -> bool:
    """Initialise submodule `name` in the superproject's config as `git submodule init` does.

    An existing submodule.<name>.url (the user's own, e.g. a mirror) is kept. Returns
    True when something was written.
    """
    if is_initialised(superproject, name):
        return False
    config = config_file(superproject)
    entries = (_parsed(config) if config else None) or []
    if configfile.get(entries, "submodule", name, "url") is None:
        runner.run(superproject, "config", f"submodule.{name}.url", url, subject=subject)
    runner.run(superproject, "config", f"submodule.{name}.active", "true", subject=subject)
    return True


def stop_recursive_fetch(runner: Runner, superproject: Path, name: str, subject: str) -> bool:
    """Write submodule.<name>.fetchRecurseSubmodules=false in the superproject's config
    unless it says something already (asked of git: it reads that file exactly). A fetch
    or pull in the superproject then fetches nothing for the submodule; qola fetches its
    pin itself. Returns True when something was written."""
    key = f"submodule.{name}.fetchRecurseSubmodules"
    found = runner.run(superproject, "config", "--local", "--get", "--end-of-options", key,
                       check=False, subject=subject)  # fmt: skip
    if found.status != 1:  # 0: set; else git could not read the config (the next step says)
        return False
    runner.run(superproject, "config", "--local", key, "false", subject=subject)
    return True


def remote_urls(runner: Runner, tree: Path, name: str) -> list[str]:
    """Every remote.<name>.url git reads in the repository at tree (every scope, every
    include), in git's order: a fetch of the remote goes to the first; [] when none (or
    git cannot list them, where no git runs either)."""
    out = runner.run(tree, "config", "-z", "--get-all", "--end-of-options",
                     f"remote.{name}.url", check=False)  # fmt: skip
    return out.stdout.split("\0")[:-1] if out.status == 0 else []


def modules_dir(runner: Runner, superproject: Path, name: str, subject: str) -> Path:
    """Where git keeps the repository of submodule `name`: <git dir>/modules/<name>."""
    if not is_safe_name(name):
        raise GitError(
            subject,
            f"the submodule name {name!r} could place its repository outside "
            f"{superproject}'s git dir; git refuses it too",
            "rename the submodule in .gitmodules",
        )
    # Asked of git: in a linked worktree of the superproject, modules/ is per worktree.
    out = runner.run(superproject, "rev-parse", "--git-path", f"modules/{name}", subject=subject)
    found = Path(out.stdout.strip())
    found = found if found.is_absolute() else superproject / found
    # qola makes folders and a repository there: never through a link planted on the way
    # (`.git/modules` pointing elsewhere would have it write outside the project).
    gitdir = gitfiles.git_dir(superproject)
    base = gitdir if gitdir is not None and _is_below(found, gitdir) else None
    if base is None or _has_link_below(base, found):
        raise GitError(
            subject,
            f"the repository of submodule {name!r} would be at {found}, which is not "
            f"a folder of {superproject}'s git dir (a symbolic link on the way?); "
            "nothing was written",
            "look at that path; remove the link if you did not put it there, and run again",
        )
    return found


def _is_below(path: Path, folder: Path) -> bool:
    relative = os.path.relpath(path, folder)
    return not (relative == ".." or relative.startswith("../") or os.path.isabs(relative))


def _has_link_below(base: Path, path: Path) -> bool:
    """True when a folder between base and path (path included) is a symbolic link."""
    current = base
    for part in Path(os.path.relpath(path, base)).parts:
        current = current / part
        if current.is_symlink():
            return True
        if not current.exists():
            return False
    return False


def is_valid_gitdir(gitdir: Path) -> bool:
    """A repository git can use (what git's is_git_directory checks)."""
    return gitpaths.is_git_dir(os.fspath(gitdir))


def refuse_unusable(gitdir: Path, subject: str) -> None:
    """Stop when something that is not a repository git could use is where one belongs."""
    if os.path.lexists(gitdir):
        raise GitError(
            subject,
            f"{gitdir} exists but is not a repository git can use; nothing was changed there",
            "look inside; if nothing there is worth keeping, delete it and run qola again",
        )


def remove_stale_locks(gitdir: Path) -> list[Path]:
    """Remove the lock files a killed git left in a repository no checkout finished in.

    Only for such repositories (new, reused for an empty folder, or half-made): nothing
    else uses them while qola holds the root's lock, and a git killed mid-fetch leaves
    `shallow.lock` (mid-checkout `index.lock`), which makes every later git there fail.
    """
    removed = []
    candidates = list(gitdir.glob("*.lock"))
    # Below refs/ (whose subfolders rglob enters without following links), unless refs is
    # a link itself: the lock files of whatever it leads to are not git's here.
    if (gitdir / "refs").is_dir() and not (gitdir / "refs").is_symlink():
        candidates += (gitdir / "refs").rglob("*.lock")
    for lock in candidates:
        try:
            lock.unlink()
        except OSError:
            continue
        removed.append(lock)
    return removed


def create_gitdir(runner: Runner, gitdir: Path, subject: str) -> None:
    """A new, empty submodule git dir at gitdir, appearing whole (made aside, then renamed)."""
    # Below the parent repository's git dir (<it>/modules/<name>, names may hold '/'),
    # which exists: no link is followed on the way down from it.
    parts = gitdir.parts
    last = len(parts) - 1 - parts[::-1].index("modules") if "modules" in parts else None
    if last is None:
        gitdir.parent.mkdir(parents=True, exist_ok=True)
    else:
        store.make_folders(gitdir.parent, Path(*parts[:last]))
    remove_abandoned_gitdirs(gitdir)
    temp = gitdir.with_name(f"{gitdir.name}.qola-init-{os.getpid()}")
    if temp.is_symlink():
        temp.unlink()
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()  # fails on anything still in the way: git init writes only in a new folder
    try:
        runner.run(gitdir.parent, "init", "-q", "--bare", "--end-of-options", str(temp),
                   subject=subject)  # fmt: skip
        # What `git clone --separate-git-dir` leaves: not bare, the work tree elsewhere.
        runner.run(temp, "config", "core.bare", "false", subject=subject)
        os.replace(temp, gitdir)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def remove_abandoned_gitdirs(gitdir: Path) -> None:
    """Remove temporary git dirs (`<name>.qola-init-<pid>`) whose run has died."""
    for leftover in gitdir.parent.glob(f"{glob_escape(gitdir.name)}.qola-init-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and store.is_alive(int(pid)):
            continue
        shutil.rmtree(leftover, ignore_errors=True)


def connect(runner: Runner, worktree: Path, gitdir: Path, subject: str) -> None:
    """Point worktree at gitdir and back, with relative paths, as git does."""
    write_gitfile(worktree, gitdir)
    set_worktree(runner, gitdir, worktree_value(worktree, gitdir), subject)


def write_gitfile(worktree: Path, gitdir: Path) -> None:
    """The `.git` file of a work tree whose repository is gitdir (a path relative to it)."""
    relative = os.path.relpath(os.path.realpath(gitdir), os.path.realpath(worktree))
    store.write_file(worktree / ".git", f"gitdir: {relative}\n".encode(), worktree)


def worktree_value(worktree: Path, gitdir: Path) -> str:
    """core.worktree for gitdir: the work tree relative to it, as git writes it."""
    return os.path.relpath(os.path.realpath(worktree), os.path.realpath(gitdir))


def set_worktree(runner: Runner, gitdir: Path, value: str | None, subject: str) -> None:
    """Set (or, with None, remove) core.worktree in gitdir's config."""
    # Run against the config file, not the repository: git refuses to start in a git
    # dir whose core.worktree names a folder that does not exist (yet, or any more).
    # So the runner's check of the repository it runs in does not cover this one.
    problem = store.git_write_problem(gitdir)
    if problem is not None:
        from qola.gitrun.guard import UnsafeRepositoryError  # lazy: only where git runs

        raise UnsafeRepositoryError(
            subject,
            f"{problem}; git would write where it leads (`git config --file`), and qola runs "
            "no git that writes in this repository as it is",
            "if you did not put it there, remove it (git makes its own) and run again",
        )
    config = ["config", "--file", str(gitdir / "config")]
    if value is None:
        args = [*config, "--unset", "core.worktree"]
        out = runner.run(gitdir.parent, *args, check=False)
        if out.status not in (0, 5):  # 5: the key was not set
            from qola.gitrun.git import command_error  # lazy: only where git runs

            raise command_error(subject, args, out)
        return
    runner.run(gitdir.parent, *config, "core.worktree", value, subject=subject)


def nested_path_problem(tree: Path, path: str) -> str | None:
    """Why git would refuse to put a nested submodule at path below tree (None: it would not)."""
    parts = PurePosixPath(path).parts
    if not parts or ".." in parts or any(p.lower() == ".git" for p in parts):
        return f"its path {path!r} is not a folder inside the repository"
    real_tree = os.path.realpath(tree)
    real = os.path.realpath(tree / path)
    if os.path.commonpath([real_tree, real]) != real_tree:
        return f"its path {path!r} leads outside the repository through a symlink"
    return None
