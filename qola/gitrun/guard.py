"""Commands a repository's own config would make git run, overridden before git runs there.

Decided from git's own listing of the config (configprobe.py), passed as the command
scope with the user's value or a disabling one; what cannot be overridden stops the
command (exit 3). Why and how: docs/development.md, "What a repository's config would
make git run".
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qola.gitrun import config_listing, fetchtarget, overrides
from qola.gitrun.overrides import Role, UnsafeConfigError, UnsafeRepositoryError
from qola.repo import configfile, gitfiles, gitpaths, index
from qola.repo.configfile import Entry
from qola.repo.gitpaths import signature

__all__ = ["Guard", "UnsafeConfigError", "UnsafeRepositoryError", "environment_pairs",
           "signature"]  # fmt: skip

# Repositories within repositories deeper than this are refused: real trees nest a few levels.
_MAX_DEPTH = 16
# git subcommands that talk to a remote (and so read remote.<name>.uploadpack), and push.
_FETCHING = frozenset({"fetch", "clone", "ls-remote", "pull", "remote", "submodule",
                       "fetch-pack"})  # fmt: skip
_PUSHING = frozenset({"push", "send-pack"})


@dataclass(frozen=True)
class _Repo:
    """One repository git may enter, and where its listing is made (as git would enter it)."""

    gitdir: str
    cwd: str
    flags: tuple[str, ...]  # --git-dir, for a git dir of its own (no work tree)
    common: str


@dataclass
class _Known:
    """The repositories found from one folder, and the files and folders that says."""

    watched: tuple[str, ...]
    stats: tuple[object, ...]
    repos: tuple[_Repo, ...]


# git's listing of each repository's config, for the whole process (every Runner of one
# command shares it): key -> (stats of what it was read from, the listing).
_LISTINGS: dict[str, tuple[tuple[object, ...], config_listing.Listing]] = {}
_LISTINGS_LOCK = threading.Lock()


@dataclass
class Guard:
    """The overrides for each repository a Runner runs git in (cached, thread-safe)."""

    _cache: dict[str, _Known] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # The URLs qola fetches from (the manifest's, the nested ones resolved from them): a
    # partial clone's promisor remote must be one, where git may fetch lazily. Empty: a
    # Runner of no manifest's, which checks nothing.
    sources: set[str] = field(default_factory=set)

    def overrides(
        self,
        cwd: Path,
        args: Sequence[str] = (),
        online: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Environment variables that neutralise cwd's own commands and keep git to the
        allowed transports (none when not online); UnsafeConfigError where a setting git
        would act on for this command cannot be overridden. environ: the environment git
        will get besides these (os.environ by default); its own GIT_CONFIG_COUNT settings
        are the user's, kept and numbered before these."""
        command = _subcommand(args)
        role = Role(here=True, fetches=command in _FETCHING, pushes=command in _PUSHING,
                    online=online)  # fmt: skip
        repos = self._repositories(cwd)
        user = config_listing.user(environ)
        lfs = fetchtarget.lfs_filter(user)
        local: list[Entry] = []
        for number, repo in enumerate(repos):
            entries = _entries(repo, top=number == 0)
            here = Role(number == 0, role.fetches, role.pushes, role.online)
            overrides.refusal(entries, repo.gitdir, _work_tree_top(repo, cwd), str(cwd), here)
            url = fetchtarget.target(args, entries, user) if number == 0 and role.fetches else None
            fetchtarget.refusal(entries, user, url, str(cwd), here, lfs)
            # The root's remotes are the user's own: a root cloned partially (as Renovate
            # clones, --filter=blob:none) fetches its missing files from its own origin.
            if online and self.sources and not gitfiles.is_project_root(repo.common):
                fetchtarget.promisor_refusal(entries, user, self.sources, str(cwd))
                if lfs and number == 0:
                    # git-lfs runs where git writes files: in the repository git runs in
                    # (qola's git never recurses; it runs in each nested one itself, once
                    # their URLs are known).
                    fetchtarget.lfs_refusal(entries, user, self.sources, str(cwd))
            local += entries
        return _environment(local, online, environ=environ)

    def for_all(
        self, folders: Iterable[Path], always: Sequence[tuple[str, str]] = ()
    ) -> dict[str, str]:
        """One environment for a command that may run git in any repository at folders (or
        nested in them): `qola exec`'s build step. always: settings it gets in any case,
        after all others."""
        local: list[Entry] = []
        anything = Role(here=True, anything=True)
        for folder in folders:
            for number, repo in enumerate(self._repositories(folder)):
                entries = _entries(repo, top=number == 0)
                overrides.refusal(entries, repo.gitdir, _work_tree_top(repo, folder),
                                  str(folder), anything)  # fmt: skip
                fetchtarget.refusal(entries, config_listing.user(), None, str(folder), anything,
                                    lfs=True)  # fmt: skip
                local += entries
        return _environment(local, True, always)

    def entries(self, cwd: Path) -> list[Entry]:
        """The config entries of the repository git finds at cwd, as git lists them."""
        repos = self._repositories(cwd)
        return list(_entries(repos[0], top=True)) if repos else []

    def _repositories(self, cwd: Path) -> tuple[_Repo, ...]:
        """The repository git finds at cwd (first) and every one nested in it git may
        enter; cached until one of the files and folders that say so changes."""
        key = os.path.abspath(cwd)
        with self._lock:
            known = self._cache.get(key)
        if known is not None and signature(known.watched) == known.stats:
            return known.repos
        visit = _Visit(Path(key))
        # The .git (a file naming the git dir, or the folder) says which repository it is.
        visit.watched.append(os.path.join(key, ".git"))
        found = _repository(Path(key))
        if found is not None:
            visit.repository(str(found[0]), str(found[1]) if found[1] else None, 0)
        watched = tuple(visit.watched)
        known = _Known(watched, signature(watched), visit.found())
        with self._lock:
            self._cache[key] = known
        return known.repos


def _subcommand(args: Sequence[str]) -> str:
    """The git subcommand of args (after -c pairs and other options)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] == "-c" else rest[1:]
    return rest[0] if rest else ""


def _environment(
    local: list[Entry],
    online: bool,
    always: Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    user = config_listing.user(environ)
    found, extra = overrides.settings(local, user)
    targets, secured = fetchtarget.settings(local, user)
    allowed, variables = overrides.transports(local, user, online)
    result = {**extra, **secured, **variables}
    base = len(environment_pairs(environ))
    pins = [*found, *targets, *allowed, *always]
    given = (os.environ if environ is None else environ).get("GIT_CONFIG_PARAMETERS", "")
    if not _fits(pins, given):
        pins = _spilled(pins)
    result.update(overrides.environment(pins, base))
    if given.strip() and pins:
        # git reads GIT_CONFIG_PARAMETERS (the user's `git -c`) after GIT_CONFIG_COUNT
        # (config.c): the pins go after the user's settings there too, which they keep.
        result["GIT_CONFIG_PARAMETERS"] = " ".join([given, *(
            f"{_sq(key)}={_sq(value)}" for key, value in pins)])
    return result


# What one variable may hold for exec to take it (Linux: MAX_ARG_STRLEN, 128 KiB), and all of
# them: far below ARG_MAX (2 MiB at least), which the rest of the environment shares.
_MAX_VARIABLE = 32 * 1024
_MAX_OVERRIDES = 256 * 1024
_SPILLED: dict[str, str] = {}  # config text -> the file holding it
_SPILL_LOCK = threading.Lock()


def _fits(pins: Sequence[tuple[str, str]], given: str) -> bool:
    """Whether exec takes the pins as GIT_CONFIG_KEY_n/VALUE_n variables, and, with the
    user's GIT_CONFIG_PARAMETERS (given), all of them again in that one variable."""
    sizes = [len(os.fsencode(k)) + len(os.fsencode(v)) + 40 for k, v in pins]
    if given.strip() and len(os.fsencode(given)) + sum(sizes) > _MAX_VARIABLE:
        return False
    return all(size <= _MAX_VARIABLE for size in sizes) and sum(sizes) <= _MAX_OVERRIDES


def _spilled(pins: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """pins, as one include.path (read in the command scope, in order) of a file in a
    folder of qola's own, removed when the process ends (or, after a kill, by the next
    run): what a repository's config too large for exec (a 200 KB subsection) is
    overridden with instead of git not starting."""
    import atexit
    import shutil
    import tempfile

    text = "".join(_config_line(key, value) for key, value in pins)
    with _SPILL_LOCK:
        path = _SPILLED.get(text)
        if path is None:
            if not _SPILLED:
                from qola.gitrun import shim  # lazy: only an override too big for exec needs it

                # Named by this process (as the shim's folders are): a run that a SIGKILL
                # stopped before atexit leaves it, and the next run sweeps it.
                shim.sweep_abandoned(Path(tempfile.gettempdir()))
                folder = tempfile.mkdtemp(prefix=shim.owned_prefix("qola-overrides-"))
                atexit.register(shutil.rmtree, folder, True)
                _SPILLED[""] = folder
            path = os.path.join(_SPILLED[""], f"{len(_SPILLED)}.config")
            with open(path, "x", encoding="utf-8", errors="surrogateescape") as out:
                out.write(text)
            _SPILLED[text] = path
    return [("include.path", path)]


def _config_line(key: str, value: str) -> str:
    """One setting as config text git reads back exactly: [section "sub"] key = "value"."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    quoted = sub.replace("\\", "\\\\").replace('"', '\\"')
    header = f'[{section} "{quoted}"]' if dot else f"[{section}]"
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\t", "\\t"))  # fmt: skip
    return f'{header}\n\t{name} = "{escaped}"\n'


def _sq(text: str) -> str:
    """text quoted as git's sq_quote does, as GIT_CONFIG_PARAMETERS holds it."""
    return "'" + text.replace("'", "'\\''") + "'"


def _entries(repo: _Repo, top: bool) -> tuple[Entry, ...]:
    """The repository's own config entries. git failing to list them in the repository it
    runs in stops the command (it would fail there too); in one nested in it, git could
    not work there either, so nothing of that one's runs (and it is listed again later)."""
    try:
        return _listing(repo).entries
    except config_listing.ListingError:
        if top:
            raise
        return ()


def _listing(repo: _Repo) -> config_listing.Listing:
    """git's listing of the repository's config, made again only when a file it was read
    from (or could read) changed."""
    key = "\0".join((repo.cwd, repo.gitdir, repo.common, *repo.flags))
    with _LISTINGS_LOCK:
        known = _LISTINGS.get(key)
    if known is not None and signature(known[1].watched) == known[0]:
        return known[1]
    # The files git surely reads (and those an earlier listing read), stated before and
    # after: one rewritten while git listed it would be cached as what git read.
    first = [os.path.join(repo.common, "config"), os.path.join(repo.gitdir, "config.worktree"),
             *(known[1].watched if known is not None else ())]  # fmt: skip
    before = signature(first)
    listing = config_listing.repository(repo.cwd, list(repo.flags), repo.common, repo.gitdir)
    stats = signature(listing.watched)
    # No repository there yet, or a file changed while git read it: asked again next time.
    if listing.found and signature(first) == before:
        with _LISTINGS_LOCK:
            _LISTINGS[key] = (stats, listing)
    return listing


def _repository(cwd: Path) -> tuple[Path, Path | None] | None:
    """(git dir, work tree) of the repository git finds at cwd (bare: no work tree).

    Where `.git` leads, whether or not qola's own reads would accept the repository:
    every config git might read is listed (too many is harmless, too few is not)."""
    gitdir = gitfiles.find_git_dir(cwd)
    if gitdir is not None:
        return gitdir, cwd
    if gitpaths.may_hold_repository(os.fspath(cwd)):
        return cwd, None
    return None


class _Visit:
    """Finds every repository git may run in from one: the one itself, and recursively
    every git dir below `<git dir>/modules/` (git reuses them, and `fetch` recurses into
    them), every path `.gitmodules` lists, and every gitlink of every index, listed in
    `.gitmodules` or not (`git status` looks into each gitlink that has a `.git`, and so
    do commands run with `submodule.recurse`). An index or a .gitmodules this module
    cannot read exactly as git does makes it look for every `.git` in the work tree
    instead. Nothing is skipped: past _MAX_DEPTH levels it refuses (UnsafeConfigError).
    """

    def __init__(self, top: Path) -> None:
        self.top = top  # the folder git runs in: where every nested work tree must stay
        self.watched: list[str] = []  # every file and folder looked at, for the cache
        self._order: list[tuple[int, int]] = []  # each git dir, in the order found
        self._where: dict[tuple[int, int], tuple[str, str | None]] = {}  # its work tree
        self._trees: set[tuple[str, int, int]] = set()  # (real work tree, its git dir)
        self._folders: set[str] = set()  # real paths of the folders below modules/ listed

    def found(self) -> tuple[_Repo, ...]:
        """Each repository once, listed where git enters it: its work tree when it has
        one (git starts a nested git there), else the git dir itself (`--git-dir`)."""
        repos = []
        for inode in self._order:
            gitdir, worktree = self._where[inode]
            common = str(gitfiles.common_dir(Path(gitdir)))
            if worktree is not None:
                explicit = gitpaths.explicit_git_dir(Path(worktree))
                repos.append(_Repo(gitdir, worktree, tuple(explicit), common))
            else:
                repos.append(_Repo(gitdir, gitdir, (f"--git-dir={os.path.abspath(gitdir)}",),
                                   common))  # fmt: skip
        return tuple(repos)

    def repository(self, gitdir: str, worktree: str | None, depth: int) -> None:
        try:
            info = os.stat(gitdir)
        except OSError:
            return
        inode = (info.st_dev, info.st_ino)
        known = inode in self._where
        # A work tree is searched once per git dir, wherever links make it appear.
        tree = (os.path.realpath(worktree), *inode) if worktree else None
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
            self._order.append(inode)
            self._where[inode] = (gitdir, worktree)
            self._modules(os.path.join(str(gitfiles.common_dir(Path(gitdir))), "modules"), depth)
        elif worktree is not None and self._where[inode][1] is None:
            self._where[inode] = (gitdir, worktree)  # git enters it from its work tree
        if worktree is not None and tree is not None:
            self._trees.add(tree)
            self._work_tree(gitdir, worktree, depth)

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
        any folder); every `.git` in it where either cannot be read here."""
        links = self._gitlinks(gitdir)
        listed = self._gitmodules(worktree)
        searched = self._search(worktree) if links is None or listed is None else []
        for path in dict.fromkeys([*(links or []), *(listed or []), *searched]):
            sub = os.path.join(worktree, path)
            self.watched.append(os.path.join(sub, ".git"))
            sub_gitdir = gitfiles.find_git_dir(Path(sub))  # accepted or not: git may run in it
            if sub_gitdir is not None:
                self.repository(str(sub_gitdir), sub, depth + 1)

    def _gitmodules(self, worktree: str) -> list[str] | None:
        """The paths .gitmodules lists, read exactly as git does (None: not here)."""
        path = os.path.join(worktree, ".gitmodules")
        self.watched.append(path)
        try:
            data = configfile.read_bytes(path)
        except configfile.UnreadableConfig:
            return []  # a FIFO or such: git reads no submodules from it either
        if data is None:
            return []
        entries = configfile.parse_exact(data)
        return None if entries is None else [m.path for m in configfile.submodules_of(entries)]

    def _gitlinks(self, gitdir: str) -> list[str] | None:
        """The gitlinks of the index (git looks into each that has a `.git`); None when the
        index cannot be read here (a split or sparse index)."""
        self.watched.append(os.path.join(gitdir, "index"))
        return index.gitlink_paths(Path(gitdir))

    def _search(self, worktree: str) -> list[str]:
        """Every folder of the work tree holding a `.git` (links to folders not followed)."""
        repositories = []
        for folder, dirs, files in os.walk(worktree):
            if folder != worktree and (".git" in dirs or ".git" in files):
                repositories.append(os.path.relpath(folder, worktree))
                dirs[:] = []  # what is below it is that repository's own to list
            else:
                dirs[:] = [name for name in dirs if name != ".git"]
            self.watched.append(folder)
        return repositories


def environment_pairs(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The (key, value) pairs environ (os.environ by default) already gives git through
    GIT_CONFIG_COUNT."""
    environ = os.environ if environ is None else environ
    try:
        count = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        return []
    pairs = []
    for i in range(max(count, 0)):
        key = environ.get(f"GIT_CONFIG_KEY_{i}")
        if key is None:
            return []  # git refuses such an environment; it will say so
        pairs.append((key, environ.get(f"GIT_CONFIG_VALUE_{i}", "")))
    return pairs


def _work_tree_top(repo: _Repo, cwd: Path) -> str:
    """Where a repository's core.worktree may lead: for a git dir inside a `.git` (a
    submodule's, under .git/modules/), the work tree holding that `.git`, below which
    every submodule's work tree is, never in a git dir; else the folder git runs in.

    Whoever can write inside that work tree can write its files anyway: what is kept
    out is a checkout writing anywhere else (a home folder, another project). The root of
    the project qola works on is known: a git dir in its own (in a linked worktree's,
    `<main>/.git/worktrees/<id>/modules/...`) belongs to a work tree below it."""
    gitdir = os.path.realpath(repo.gitdir)
    root = gitfiles.root_holding(gitdir)
    if root is not None:
        return root
    parts = Path(gitdir).parts
    if ".git" in parts:
        return str(Path(*parts[: parts.index(".git")]))
    return os.path.realpath(cwd)
