"""Commands a repository's own config would make git run, overridden before git runs there.

A repository's config (`.git/config`, `config.worktree`, whatever they include)
can name programs git runs: a clean or smudge filter, a textconv, a credential
helper, an ssh command, a pager ... In a dependency, or in a tree another user
owns (the safe.directory shim makes git accept it, and qola may run as root),
that config is not the user's to trust. So before git runs in a repository,
qola reads that config (and that of every nested submodule git may enter,
recursively) in Python, and for each such setting it finds, passes the same
key on git's command line (GIT_CONFIG_COUNT/KEY/VALUE: the command scope, read
after every file and handed down to the nested submodules' git processes).
The value is the user's own, from the system and global config and the
environment, when they set one (their LFS filter or credential helper keeps
working), else one that git 2.39's source shows to disable the setting.

Two settings cannot be overridden that way and stop the run instead (exit 3):
`remote.<name>.uploadpack` (git takes the first value it reads, and local
config comes before the command line) and a `core.worktree` leading out of
the repository's folder (git would write the files of a checkout there).

The result is cached per repository, keyed by the stat of every file and
folder it was read from: it adds no git process, and nothing at all to the
no-op path, which runs no git.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qola import gitconfig, gitfiles, gitindex
from qola.errors import GitError
from qola.gitconfig import Entry

# Settings whose value is a command (or a program git runs), by (section, key), with the
# value that disables each when the user has none of their own. Checked in git 2.39.5:
_NEUTRAL = {
    # convert.c apply_filter(): an empty clean/smudge/process command is skipped ...
    ("filter", "clean"): "",
    ("filter", "smudge"): "",
    ("filter", "process"): "",
    # ... but a filter that is `required` and did not run is an error: not required.
    ("filter", "required"): "false",
    # userdiff.c/diff.c: an empty textconv or external diff is run as "", which fails
    # to start: nothing runs (and a diff needing it fails).
    ("diff", "textconv"): "",
    ("diff", "command"): "",
    ("diff", "external"): "",
    ("merge", "driver"): "",  # ll-merge.c: the empty command line fails to start
    ("core", "pager"): "cat",  # pager.c: "cat" (or "") means no pager
    ("pager", "*"): "false",  # pager.<cmd>: a boolean false means no pager
    ("core", "editor"): ":",  # editor.c: ":" is never run
    ("sequence", "editor"): ":",
    ("core", "alternaterefscommand"): "",  # object-file.c: fails to start, no refs read
    ("interactive", "difffilter"): "",
    ("gpg", "program"): "gpg",  # gpg-interface.c: the built-in programs
    ("gpg", "openpgp.program"): "gpg",
    ("gpg", "x509.program"): "gpgsm",
    ("gpg", "ssh.program"): "ssh-keygen",
    ("gpg", "ssh.defaultkeycommand"): '""',  # split into one empty word: fails to start
    # Programs of commands qola never runs; overridden all the same, as they cost nothing.
    ("difftool", "cmd"): "",
    ("mergetool", "cmd"): "",
    ("man", "cmd"): "",
    ("browser", "cmd"): "",
    ("guitool", "cmd"): "",
}
# Defaults of protocol.<name>.allow (transport.c get_protocol_config); others: "user".
_PROTOCOL_DEFAULTS = {"http": "always", "https": "always", "git": "always", "ssh": "always",
                      "ext": "never"}  # fmt: skip
_HELPER = ("credential", "helper")
# Every section holding a setting this module overrides or refuses.
_SECTIONS = frozenset(
    [section for section, _ in _NEUTRAL]
    + ["credential", "protocol", "submodule", "remote", "core", "pager"]
)
# Repositories within repositories deeper than this are refused: real trees nest a few levels.
_MAX_DEPTH = 16


class UnsafeRepositoryError(GitError):
    """git would run a repository's own command, or write outside the project, in a
    repository as it is: qola runs no git there."""


class UnsafeConfigError(UnsafeRepositoryError):
    """A repository's own config names a command qola cannot override: nothing is run."""


@dataclass
class _Known:
    """The overrides worked out for a repository, and the files and folders they came from."""

    watched: tuple[str, ...]
    stats: tuple[object, ...]
    overrides: dict[str, str]


@dataclass
class Guard:
    """The overrides for each repository a Runner runs git in (cached, thread-safe)."""

    _cache: dict[str, _Known] = field(default_factory=dict)
    _user: list[Entry] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def overrides(self, cwd: Path) -> dict[str, str]:
        """Environment variables that neutralise cwd's own commands (GitError if it cannot)."""
        found = _repository(cwd)
        if found is None:
            return {}
        gitdir, worktree = found
        key = f"{gitdir}\0{cwd}"
        with self._lock:
            known = self._cache.get(key)
            if known is not None and _signature(known.watched) == known.stats:
                return known.overrides
            visit = _Visit(os.environ.get("HOME"), cwd)
            visit.repository(str(gitdir), str(worktree) if worktree else None, 0)
            result = _neutralise(visit.entries, self._user_entries())
            watched = tuple(visit.watched)
            self._cache[key] = _Known(watched, _signature(watched), result)
            return result

    def for_all(
        self, folders: Iterable[Path], always: Sequence[tuple[str, str]] = ()
    ) -> dict[str, str]:
        """One environment for a command that may run git in any repository at folders (or
        nested in them): `qola exec`'s build step. always: settings it gets in any case,
        after all others."""
        entries: list[tuple[Entry, str, Path]] = []
        for folder in folders:
            found = _repository(folder)
            if found is not None:
                visit = _Visit(os.environ.get("HOME"), folder)
                visit.repository(str(found[0]), str(found[1]) if found[1] else None, 0)
                entries += visit.entries
        with self._lock:
            return _neutralise(entries, self._user_entries(), always)

    def _user_entries(self) -> list[Entry]:
        """The user's own config: system, global (with includes) and the environment; read
        once per Guard (one command), as git reads it once per process."""
        if self._user is None:
            home = os.environ.get("HOME")
            entries: list[Entry] = []
            for path in _user_files():
                try:
                    entries += gitconfig.read(path, home, [])
                except gitconfig.UnreadableConfig:
                    continue  # the user's own file: git will say what is wrong with it
            self._user = entries + _environment_entries()
        return self._user


def _repository(cwd: Path) -> tuple[Path, Path | None] | None:
    """(git dir, work tree) of the repository git finds at cwd (bare: no work tree).

    Where `.git` leads, whether or not qola's own reads would accept the repository:
    every config git might read is read here (too many is harmless, too few is not)."""
    gitdir = gitfiles.find_git_dir(cwd)
    if gitdir is not None:
        return gitdir, cwd
    if os.path.isfile(os.path.join(cwd, "HEAD")) and os.path.isdir(os.path.join(cwd, "objects")):
        return cwd, None
    return None


class _Visit:
    """Reads the config of a repository and of every nested one git may run in.

    That is every repository git can reach from this one: below `<git dir>/modules/`
    (git reuses them, and `fetch` recurses into them), at every path `.gitmodules`
    lists, and at every gitlink of every index, listed in `.gitmodules` or not: `git
    status` looks into each gitlink that has a `.git`, and so do commands run with
    `submodule.recurse`. An index this module cannot read makes it look for every
    `.git` in the work tree instead. Nothing is skipped: past _MAX_DEPTH levels of
    repositories within repositories it refuses (UnsafeConfigError).
    """

    def __init__(self, home: str | None, top: Path) -> None:
        self.home = home
        self.top = top  # the folder git runs in: where every nested work tree must stay
        # (entry, the git dir whose config it is, top)
        self.entries: list[tuple[Entry, str, Path]] = []
        self.watched: list[str] = []  # every file and folder looked at, for the cache
        self._seen: set[tuple[int, int]] = set()  # (device, inode) of each git dir read
        self._trees: set[tuple[str, int, int]] = set()  # (real work tree, its git dir)
        self._folders: set[str] = set()  # real paths of the folders below modules/ listed

    def repository(self, gitdir: str, worktree: str | None, depth: int) -> None:
        try:
            info = os.stat(gitdir)
        except OSError:
            return
        known = (info.st_dev, info.st_ino) in self._seen
        # A work tree is searched once per git dir, wherever links make it appear.
        tree = (os.path.realpath(worktree), info.st_dev, info.st_ino) if worktree else None
        if known and (tree is None or tree in self._trees):
            return
        if depth > _MAX_DEPTH:
            raise UnsafeConfigError(
                str(self.top),
                f"{worktree or gitdir} is a repository nested more than {_MAX_DEPTH} levels "
                "deep; qola reads the config of every repository git may enter before git "
                "runs there, and stops rather than leave one unread",
                "look for repositories planted inside each other, or a symbolic link "
                "leading back up the tree",
            )
        if not known:
            self._seen.add((info.st_dev, info.st_ino))
            common = str(gitfiles.common_dir(Path(gitdir)))
            entries = self._read(os.path.join(common, "config"), worktree or gitdir)
            # git reads config.worktree only when the repository says so (worktree.c).
            if any(e.section == "extensions" and e.key == "worktreeconfig" for e in entries):
                entries += self._read(os.path.join(gitdir, "config.worktree"), worktree or gitdir)
            self.entries += [(entry, gitdir, self.top) for entry in entries]
            self._modules(os.path.join(common, "modules"), depth)
        if worktree is not None and tree is not None:
            self._trees.add(tree)
            self._work_tree(gitdir, worktree, depth)

    def _read(self, path: str, where: str) -> list[Entry]:
        try:
            return gitconfig.read(path, self.home, self.watched)
        except gitconfig.UnreadableConfig as error:
            raise UnsafeConfigError(
                where,
                f"cannot read the repository's config {error.path}: {error.why}",
                "qola reads a repository's config before git runs there; fix or remove it",
            ) from None

    def _modules(self, top: str, depth: int) -> None:
        """The submodules' git dirs below <git dir>/modules (names may hold slashes)."""
        pending = [top]
        while pending:
            folder = pending.pop()
            self.watched.append(folder)
            real = os.path.realpath(folder)
            if real in self._folders:
                continue  # a link back up: listed already
            self._folders.add(real)
            try:
                children = sorted(entry.path for entry in os.scandir(folder) if entry.is_dir())
            except OSError:
                continue  # git cannot list it either
            for child in reversed(children):
                if os.path.isfile(os.path.join(child, "HEAD")):
                    self.repository(child, None, depth + 1)
                else:
                    pending.append(child)

    def _work_tree(self, gitdir: str, worktree: str, depth: int) -> None:
        """The repositories checked out in a work tree: at each gitlink of its index and at
        each path its .gitmodules lists (a .git folder of their own, or a .git file naming
        any folder)."""
        paths = dict.fromkeys(self._gitlinks(gitdir, worktree))
        gitmodules = os.path.join(worktree, ".gitmodules")
        self.watched.append(gitmodules)
        try:
            text = gitconfig.read_text(gitmodules)
        except gitconfig.UnreadableConfig:
            text = None  # a FIFO or such: git reads no submodules from it either
        for module in gitconfig.submodules(text) if text is not None else []:
            paths[module.path] = None
        for path in paths:
            sub = os.path.join(worktree, path)
            self.watched.append(os.path.join(sub, ".git"))
            sub_gitdir = gitfiles.find_git_dir(Path(sub))  # accepted or not: git may run in it
            if sub_gitdir is not None:
                self.repository(str(sub_gitdir), sub, depth + 1)

    def _gitlinks(self, gitdir: str, worktree: str) -> list[str]:
        """The gitlinks of the index (git looks into each that has a `.git`); every folder
        holding a `.git` when the index cannot be read here (a split or sparse index)."""
        self.watched.append(os.path.join(gitdir, "index"))
        found = gitindex.gitlink_paths(Path(gitdir))
        if found is not None:
            return found
        repositories = []
        for folder, dirs, files in os.walk(worktree):  # links to folders are not followed
            if folder != worktree and (".git" in dirs or ".git" in files):
                repositories.append(os.path.relpath(folder, worktree))
                dirs[:] = []  # what is below it is that repository's own to list
            else:
                dirs[:] = [name for name in dirs if name != ".git"]
            self.watched.append(folder)
        return repositories


def _signature(paths: Iterable[str]) -> tuple[object, ...]:
    found: list[object] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append(None)
            continue
        found.append((info.st_mtime_ns, info.st_size, info.st_ino, info.st_mode))
    return tuple(found)


def _user_files() -> list[str]:
    """The user's system and global config files, as git finds them (they may not exist)."""
    from qola.shim import user_global_configs

    files = []
    if not _is_true(os.environ.get("GIT_CONFIG_NOSYSTEM")):
        files.append(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    # The shim's file (overlay) includes exactly these and adds safe.directory values,
    # which name no command: reading the user's own files spares a read per new repository.
    files += [str(path) for path in user_global_configs()]
    return files


def _environment_entries() -> list[Entry]:
    """GIT_CONFIG_COUNT/KEY_n/VALUE_n of the environment, as entries."""
    entries = []
    for key, value in environment_pairs():
        section, _, rest = key.partition(".")
        middle, _, name = rest.rpartition(".")
        entries.append(Entry(section.lower(), middle or None, name.lower(), value, "environment"))
    return entries


def environment_pairs() -> list[tuple[str, str]]:
    """The (key, value) pairs the environment already gives git through GIT_CONFIG_COUNT."""
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        return []
    pairs = []
    for i in range(max(count, 0)):
        key = os.environ.get(f"GIT_CONFIG_KEY_{i}")
        if key is None:
            return []  # git refuses such an environment; it will say so
        pairs.append((key, os.environ.get(f"GIT_CONFIG_VALUE_{i}", "")))
    return pairs


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _neutralise(
    local: list[tuple[Entry, str, Path]],
    user: list[Entry],
    always: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """The environment that overrides every command setting in local (or raises), and then
    sets always."""
    pairs: dict[str, str] = {}  # key -> value, in order
    extra: dict[str, str] = {}
    reset_helpers = False

    def users(entry: Entry) -> str | None:
        found = None
        for mine in user:
            if (mine.section, mine.subsection, mine.key) == (
                entry.section, entry.subsection, entry.key
            ):  # fmt: skip
                found = mine.value
        return found

    for entry, gitdir, cwd in local:
        section, sub, key = entry.section, entry.subsection, entry.key
        if section not in _SECTIONS:
            continue  # branch.*, remote.*.url, submodule.*.url ...: most entries
        _check_unoverridable(cwd, entry, gitdir)
        if (section, key) == _HELPER:
            reset_helpers = True
            continue
        if section == "protocol" and key == "allow":
            pairs["protocol.ext.allow"] = _user_protocol(user, "ext")
            if sub is not None and sub != "ext":
                pairs[entry.name] = _user_protocol(user, sub)
            continue
        if section == "submodule" and key == "update" and entry.value.startswith("!"):
            pairs[entry.name] = users(entry) or "checkout"
            continue
        if (section, key) == ("core", "sshcommand"):
            # GIT_SSH_COMMAND, when set, wins over any config anyway.
            ssh = os.environ.get("GIT_SSH")
            program = users(entry) or (shlex.quote(ssh) if ssh else "ssh")
            pairs[entry.name] = os.environ.get("GIT_SSH_COMMAND") or program
            continue
        if (section, key) == ("core", "askpass"):
            # GIT_ASKPASS, when set, wins; else git falls back on SSH_ASKPASS.
            program = users(entry) or os.environ.get("SSH_ASKPASS", "")
            pairs[entry.name] = os.environ.get("GIT_ASKPASS") or program
            continue
        if (section, key) == ("core", "gitproxy"):
            # git takes the first value that matches the host, and local config comes
            # before the command line: the environment variable, read first, wins.
            extra.setdefault("GIT_PROXY_COMMAND", os.environ.get("GIT_PROXY_COMMAND", ""))
            continue
        neutral = _neutral(section, sub, key)
        if neutral is not None:
            mine = users(entry)
            pairs[entry.name] = mine if mine is not None else neutral
    result = dict(extra)
    settings = list(pairs.items())
    if reset_helpers:
        # An empty helper empties the list so far (credential.c); then the user's own
        # helpers, in their order and with their URL patterns, go back on.
        helpers = [(e.name, e.value) for e in user if (e.section, e.key) == _HELPER]
        settings = [("credential.helper", ""), *helpers, *settings]
    settings += always
    if settings:
        base = len(environment_pairs())
        result["GIT_CONFIG_COUNT"] = str(base + len(settings))
        for i, (key, value) in enumerate(settings, base):
            result[f"GIT_CONFIG_KEY_{i}"] = key
            result[f"GIT_CONFIG_VALUE_{i}"] = value
    return result


def _neutral(section: str, sub: str | None, key: str) -> str | None:
    """The disabling value of a command setting; None for any other setting."""
    if section == "pager" and sub is None:
        return _NEUTRAL[("pager", "*")]
    if section == "gpg" and sub is not None:
        return _NEUTRAL.get((section, f"{sub.lower()}.{key}"))
    if section in ("filter", "merge", "difftool", "mergetool", "man", "browser", "guitool"):
        return _NEUTRAL.get((section, key)) if sub is not None else None
    if section == "diff":
        if sub is None:
            return _NEUTRAL[("diff", "external")] if key == "external" else None
        return _NEUTRAL.get((section, key)) if key in ("textconv", "command") else None
    return _NEUTRAL.get((section, key)) if sub is None else None


def _user_protocol(user: list[Entry], name: str) -> str:
    """protocol.<name>.allow as the user's own config (alone) would have it."""
    own = general = None
    for entry in user:
        if entry.section == "protocol" and entry.key == "allow":
            if entry.subsection == name:
                own = entry.value
            elif entry.subsection is None:
                general = entry.value
    return own or general or _PROTOCOL_DEFAULTS.get(name, "user")


def _check_unoverridable(cwd: Path, entry: Entry, gitdir: str) -> None:
    is_upload_pack = entry.section == "remote" and entry.key == "uploadpack"
    if is_upload_pack and entry.value.strip() not in ("", "git-upload-pack"):
        raise UnsafeConfigError(
            str(cwd),
            f"{entry.origin} sets {entry.name} = {entry.value!r}, a command git would "
            "run when it fetches; qola runs no command from a repository's own config, "
            "and git lets no command line override this one",
            f"if you trust it, remove it (git config --file {entry.origin} --unset "
            f"{entry.name}) and run again",
        )
    if entry.section == "core" and entry.subsection is None and entry.key == "worktree":
        where = os.path.realpath(os.path.join(gitdir, entry.value))
        top = _work_tree_top(os.path.realpath(gitdir), os.path.realpath(cwd))
        inside = os.path.commonpath([top, where]) == top
        if not inside or ".git" in Path(os.path.relpath(where, top)).parts:
            raise UnsafeConfigError(
                str(cwd),
                f"{entry.origin} sets core.worktree = {entry.value!r}, which leads to {where}, "
                f"out of {top}; git would write the files of a checkout there",
                f"if that is not meant, remove it (git config --file {entry.origin} --unset "
                "core.worktree) and run again",
            )


def _work_tree_top(gitdir: str, cwd: str) -> str:
    """Where a repository's core.worktree may lead: for a git dir inside a `.git` (a
    submodule's, under .git/modules/), the work tree holding that `.git`, below which
    every submodule's work tree is, never in a git dir; else the folder git runs in.

    Whoever can write inside that work tree can write its files anyway: what is kept
    out is a checkout writing anywhere else (a home folder, another project). The root of
    the project qola works on is known: a git dir in its own (in a linked worktree's,
    `<main>/.git/worktrees/<id>/modules/...`) belongs to a work tree below it."""
    root = gitfiles.root_holding(gitdir)
    if root is not None:
        return root
    parts = Path(gitdir).parts
    if ".git" in parts:
        return str(Path(*parts[: parts.index(".git")]))
    return cwd
