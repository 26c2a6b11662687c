"""The one way qola runs git: the Runner. GitPython is its engine, imported lazily (the
process itself is started and watched in process.py).

Every call gets the `-c` settings that keep hooks, fsmonitor, housekeeping and
submodule recursion off, and `-C <dir>`; a repository's own commands are overridden on
the way in (docs/development.md, "Running git").
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from qola.base import console, hints
from qola.base.errors import GitError, UsageError
from qola.gitrun import config_listing, lfsconfig
from qola.gitrun.guard import Guard, UnsafeRepositoryError
from qola.gitrun.process import LEAKED_VARIABLES as LEAKED_VARIABLES
from qola.gitrun.process import execute, stream
from qola.gitrun.process import execute_raw as execute_raw
from qola.repo import configfile, gitfiles, store
from qola.repo.gitpaths import explicit_git_dir, may_hold_repository

# Where qola's own reading of a config is not sure, git reads it (never on the no-op path,
# which does not import this module and holds git back besides).
configfile.use_git(config_listing.read_text)

MIN_VERSION = (2, 32)  # GIT_CONFIG_GLOBAL, which the safe.directory shim needs

# No hook, no fsmonitor; and no automatic housekeeping: `gc --auto`, which fetch starts
# when the repository's own config says it is due (git 2.39), writes gc.pid, gc.log, packs
# and reflogs by lock files that follow a link planted at the name; fetch.writeCommitGraph
# has fetch write a commit-graph chain under objects/info the same way.
_HARDENING = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
              "-c", "gc.auto=0", "-c", "maintenance.auto=false",
              "-c", "fetch.writeCommitGraph=false")  # fmt: skip
# qola's own commands only: git reads submodule.recurse=true (a common global setting) as
# --recurse-submodules for checkout, reset, read-tree, fetch and more (git-config(1)), so
# a move would check out nested submodules before their commits are fetched, and a
# reset --hard would wipe nested work trees before their changes were saved. qola
# brings nested submodules itself (qola/sync/nested.py); a user's command (`qola exec`)
# keeps the user's setting.
_NO_RECURSION = ("-c", "submodule.recurse=false")

_DUBIOUS = "detected dubious ownership"
# Git's stderr is shown whole up to _MOST_LINES lines; longer, its first and last lines.
_MOST_LINES = 20
_FIRST_LINES = 8
_LAST_LINES = 3
# Failures of the machine rather than of git: what git's messages say (strerror() words,
# or git's own "Out of diskspace" from write_or_die), the cause named, and what to do.
_CAUSES = (
    (("No space left on device", "Out of diskspace"), "No space left on device",
     "free some space on the disk that holds the dependency (and its git dir), then run "
     "again: what was half-written is redone"),
    (("Disk quota exceeded",), "Disk quota exceeded",
     "free some space within your disk quota, then run again"),
    (("Read-only file system",), "Read-only file system",
     "check out on a writable file system, or mount it writable"),
    (("Too many open files",), "Too many open files",
     "raise the limit on open files (ulimit -n), then run again"),
)  # fmt: skip


def scrub_environment(environ: os._Environ[str] | dict[str, str] = os.environ) -> None:
    """Remove the leaked repository-binding variables from this process."""
    for var in LEAKED_VARIABLES:
        environ.pop(var, None)


@dataclass(frozen=True)
class Output:
    status: int
    stdout: str
    stderr: str
    timed_out: float | None = None  # the limit, when git was stopped for exceeding it
    # What a failure's cause calls for, known only where git ran.
    hint: str | hints.Hint | None = None


@dataclass
class Runner:
    """Runs git with qola's hardening and an environment overlay (the shim's)."""

    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    # Called once with each folder git is about to run in (several at once from
    # trust_first): the shim trusts exactly those.
    trust: Callable[..., None] | None = None
    log: list[str] = field(default_factory=list)
    # A command documented as offline (verify, status, --offline ...): git may use no
    # transport at all, so nothing is fetched, lazily or not, but where a call says
    # network=True (verify --remote's ls-remote).
    offline: bool = False
    _version_checked: bool = False
    _trusted: set[Path] = field(default_factory=set)
    _guard: Guard = field(init=False)

    def __post_init__(self) -> None:
        self._guard = Guard()

    def expect_sources(self, urls: Iterable[str]) -> None:
        """URLs qola fetches from: a partial clone's promisor remote must be one of them."""
        self._guard.sources.update(urls)

    def trust_first(self, folders: list[Path]) -> None:
        """Trust now, in one step, the repositories among folders that git will run in:
        the shim then writes its file once, not once for each as git first runs there."""
        new = [f for f in dict.fromkeys(folders) if f not in self._trusted and is_repository(f)]
        if self.trust is not None and new:
            self._trusted.update(new)
            self.trust(*new)

    def run(
        self,
        cwd: Path,
        *args: str,
        check: bool = True,
        subject: str | None = None,
        network: bool = False,
        env: Mapping[str, str] | None = None,
        progress: bool = False,
        at_most: float | None = None,
    ) -> Output:
        """Run `git -C cwd args…` (env: extra variables); a failure raises GitError.

        at_most: a network command's limit in seconds when it is below the runner's (a
        question whose answer is only an improvement, such as whether a remote has a
        commit: it must not hold a refusal up for the whole fetch timeout).

        progress: a long command (clone, fetch, checkout); on a thread with a console
        Activity it runs with --progress and git's progress lines go to the activity.
        """
        # Checked at the first git call, so the no-op path (no git at all) does not pay.
        self.ensure_version()
        # Trust only folders that are repositories themselves (never a temporary or
        # parent folder), and stop git's discovery at the folder's parent: a missing
        # or broken .git must not make git act on the repository around it.
        if self.trust is not None and cwd not in self._trusted and is_repository(cwd):
            self._trusted.add(cwd)
            self.trust(cwd)
        # The repository's own commands: overridden, or (UnsafeConfigError) nothing runs.
        given = {**self._environment(), **(env or {})}
        neutral = self._guard.overrides(cwd, args, online=network or not self.offline,
                                        environ=_command_scope(given))
        lfsconfig.refuse_foreign(self, cwd, _command_scope(given))  # git-lfs's own file
        _check_writes(cwd, args, subject)
        activity = console.current() if progress else None
        running = _with_progress(args) if activity is not None else args
        where = ["-C", str(cwd), *explicit_git_dir(cwd)]
        command = ["git", *where, *_HARDENING, *_NO_RECURSION, *running]
        self.log.append(" ".join(["git", *args]))
        console.debug(f"run: {shlex.join(['git', *where, *running])}")
        full_env = {**given, **neutral}
        full_env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.realpath(cwd))
        limit = self.timeout if network else None
        if network and at_most is not None:
            limit = at_most if limit is None else min(limit, at_most)
        started = time.monotonic()
        if activity is None:
            status, stdout, stderr = execute(command, full_env, limit)
        else:
            try:
                status, stdout, stderr = stream(command, full_env, limit, activity)
            finally:
                activity.git_finished()
        # GitPython kills git (and its children: ssh, remote helpers) at the limit and
        # replaces stderr with its own message; a non-zero status that late is that kill.
        late = limit is not None and status != 0 and time.monotonic() - started >= limit
        out = Output(status, stdout, stderr, limit if late else None)
        if status != 0 and (lfs := lfsconfig.overridden_endpoints(self, cwd, stderr,
                                                                       _command_scope(given))):
            out = dataclasses.replace(out, hint=lfsconfig.endpoint_hint(lfs))
        if check and status != 0:
            raise command_error(subject or str(cwd), args, out)
        return out

    def repository_config(self, cwd: Path) -> list[configfile.Entry]:
        """The config of the repository at cwd (its own: local and worktree scope, every
        include) as git lists it: the listing the Runner makes before git runs there."""
        return self._guard.entries(cwd)

    def overrides_for_all(self, folders: list[Path]) -> dict[str, str]:
        """The environment that keeps a command of the user's, which may run git in any of
        folders, from running those repositories' own commands (UnsafeConfigError if not),
        and gives its git what qola's own gets on the command line: no hooks, no fsmonitor;
        and keeps it to the transports a user would expect."""
        for folder in folders:
            lfsconfig.refuse_foreign(self, folder, os.environ)
        return self._guard.for_all(folders, hardening_settings())

    def repositories(self, cwd: Path) -> list[tuple[str, str | None]]:
        """(git dir, work tree or None) of the repository at cwd and of each nested in it
        that git may enter: those whose config the Runner lists before git runs there."""
        return [(r.gitdir, None if r.flags else r.cwd) for r in self._guard._repositories(cwd)]

    def ensure_version(self) -> None:
        """Fail clearly when git is too old; runs git once per Runner.

        Call it before threads share this Runner, so none of them runs git unchecked.
        """
        if not self._version_checked:
            self._version_checked = True
            check_version(self)

    def _environment(self) -> dict[str, str]:
        # Replace refs (`git replace`) would let git show one commit's content under
        # another's name: qola compares SHAs, so it must see the real objects.
        env = {**self.env, "GIT_NO_REPLACE_OBJECTS": "1"}
        if not sys.stdin or not sys.stdin.isatty():
            # No one is there to answer a credential prompt (CMake, CI): fail instead of hanging.
            env.setdefault("GIT_TERMINAL_PROMPT", "0")
        return env


def _command_scope(given: Mapping[str, str]) -> Mapping[str, str]:
    """os.environ with the command-scope settings (GIT_CONFIG_COUNT/KEY/VALUE,
    GIT_CONFIG_PARAMETERS) the Runner's and the call's variables give git instead of the
    process's: the user's own, as a demo's or a caller's `protocol.file.allow`. (The
    shim's GIT_CONFIG_GLOBAL is left out: it holds the user's global config unchanged.)"""
    scope = {k: v for k, v in given.items() if k.startswith(_COMMAND_SCOPE)}
    if not scope:
        return os.environ
    environ = dict(os.environ)
    if "GIT_CONFIG_COUNT" in scope:
        for key in [k for k in environ if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
            del environ[key]
    environ.update(scope)
    return environ


_COMMAND_SCOPE = ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_",
                  "GIT_CONFIG_PARAMETERS")  # fmt: skip


def hardening_settings() -> list[tuple[str, str]]:
    """The (key, value) pairs every git command of qola's gets with `-c`."""
    settings = []
    for flag, value in zip(_HARDENING[::2], _HARDENING[1::2], strict=True):
        if flag == "-c":
            key, _, setting = value.partition("=")
            settings.append((key, setting))
    return settings


# Commands that write nothing in the repository they run in; status and diff refresh the
# index unless told not to (--no-optional-locks). Every other command is checked first.
_READ_ONLY = frozenset({"cat-file", "describe", "diff-tree", "for-each-ref", "log", "ls-files",
                        "ls-remote", "ls-tree", "merge-base", "patch-id", "rev-list", "rev-parse",
                        "show", "show-ref", "verify-commit", "verify-tag",
                        "version"})  # fmt: skip
_READ_ONLY_WITHOUT_LOCKS = frozenset({"status", "diff"})


def check_writable(
    cwd: Path, subject: str | None = None, doing: str = "", refs: tuple[str, ...] = ()
) -> None:
    """Raise UnsafeRepositoryError where a link planted in the repository at cwd would lead
    git's writes out of it (qola's rule for git's writes, in qola/repo/store.py). Asked before
    each git command that may write, and for a step over several repositories of each one
    before the first is touched. doing: the git command(s), for the message."""
    gitdir = gitfiles.find_git_dir(cwd) or (cwd if explicit_git_dir(cwd) else None)
    if gitdir is None:
        return  # no repository (git init, a clone into a new folder)
    problem = store.git_write_problem(gitdir, refs)
    if problem is not None:
        raise UnsafeRepositoryError(
            subject or str(cwd),
            f"{problem}; git would write where it leads (`git {doing}`), and qola runs no "
            "git that writes in this repository as it is",
            "if you did not put it there, remove it (git makes its own) and run again",
        )


def _check_writes(cwd: Path, args: tuple[str, ...], subject: str | None) -> None:
    """check_writable before a git command, unless the command only reads."""
    head: list[str] = []
    rest = list(args)
    while rest and rest[0].startswith("-"):
        head += rest[:2] if rest[0] == "-c" else rest[:1]
        rest = rest[2:] if rest[0] == "-c" else rest[1:]
    command = rest[0] if rest else ""
    unlocked = "--no-optional-locks" in head
    if command in _READ_ONLY or (command in _READ_ONLY_WITHOUT_LOCKS and unlocked):
        return
    refs = tuple(_updated_refs(rest[1:])) if command == "update-ref" else ()
    check_writable(cwd, subject, command, refs)


def _updated_refs(args: list[str]) -> list[str]:
    """The ref `git update-ref [options] <ref> ...` writes."""
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] == "-m" else args[1:]
    return args[:1]


def is_repository(folder: Path) -> bool:
    """True when folder is the top of a work tree (has .git) or a bare repository."""
    return (folder / ".git").exists() or may_hold_repository(os.fspath(folder))


def command_error(subject: str, args: tuple[str, ...] | list[str], out: Output) -> GitError:
    """A GitError that shows the command, its exit code and git's stderr."""
    shown = " ".join(["git", *args])
    if out.timed_out is not None:
        return GitError(
            subject,
            f"`{shown}` did not finish within {out.timed_out:g} s and was stopped; "
            "the remote may be unreachable or hanging",
            hints.either(
                "check the URL and the network, or raise --fetch-timeout "
                "(env QOLA_FETCH_TIMEOUT)",
                "check the URL and the network, or allow more seconds: ",
                hints.configure(env="QOLA_FETCH_TIMEOUT=1800"),
            ),
        )
    lines = out.stderr.strip().splitlines() or ["(no output)"]
    if _DUBIOUS in out.stderr:
        lines = _without_trust_advice(lines)
    if len(lines) > _MOST_LINES:
        # A full disk during a clone makes git print one line per file: thousands.
        hidden = len(lines) - _FIRST_LINES - _LAST_LINES
        lines = [*lines[:_FIRST_LINES], f"... ({hidden:,} more lines) ...", *lines[-_LAST_LINES:]]
    problem = f"`{shown}` failed with exit code {out.status}:\n" + "\n".join(
        "    " + line for line in lines
    )
    hint = out.hint
    found = [(cause, advice) for words, cause, advice in _CAUSES
             if any(word in out.stderr for word in words)]  # fmt: skip
    if found:
        cause, hint = found[0]
        problem += f"\nthe cause: {cause}"
    elif _DUBIOUS in out.stderr and hint is None:
        hint = hints.either(
            "the repository belongs to another user; run qola with "
            "--safe-directory scoped (the default) or all",
            "the repository belongs to another user; let qola trust it for its own git "
            "commands: ",
            hints.configure("-DQOLA_SAFE_DIRECTORY=SCOPED"),
            " (the default; ALL trusts every folder); a SAFE_DIRECTORY argument of "
            "qola_checkout() wins over that setting",
        )
    return GitError(subject, problem, hint)


def _without_trust_advice(lines: list[str]) -> list[str]:
    """git's stderr without its advice to trust the folder in the global config (git
    2.35.2 and later print it under "detected dubious ownership"): that trusts it for
    every program, for good, which is what qola's shim avoids; qola's own hint says what
    to do instead."""
    kept: list[str] = []
    skipping = False
    for line in lines:
        if line.startswith("To add an exception for this directory"):
            skipping = True
        elif skipping and (not line.strip() or "safe.directory" in line):
            continue
        else:
            skipping = False
            kept.append(line)
    return kept


def _with_progress(args: tuple[str, ...]) -> tuple[str, ...]:
    """args with --progress among the subcommand's options: before --end-of-options, else
    before the last argument (the commit or the refspec).

    fetch loses its -q: with it, git 2.39's fetch tells index-pack to be quiet, and the
    receiving side's progress (the bytes) is never shown, --progress or not.
    """
    at = args.index("--end-of-options") if "--end-of-options" in args else len(args) - 1
    head, tail = list(args[:at]), args[at:]
    first = 0
    while first < len(head) and head[first] == "-c":
        first += 2
    if head[first : first + 1] == ["fetch"] and "-q" in head[first:]:
        head.remove("-q")
    return (*head, "--progress", *tail)


def version(runner: Runner) -> tuple[int, int]:
    """The git version as (major, minor)."""
    # `git version` needs no repository: nothing to trust, no folder to run in.
    status, stdout, stderr = execute(["git", "version"], runner._environment(), None)
    match = re.search(r"(\d+)\.(\d+)", stdout)
    if status != 0 or not match:
        raise UsageError("git", f"cannot read the git version: {(stdout + stderr).strip()!r}")
    return int(match.group(1)), int(match.group(2))


def check_version(runner: Runner) -> None:
    """Fail clearly when git is older than qola needs."""
    found = version(runner)
    if found < MIN_VERSION:
        want = ".".join(map(str, MIN_VERSION))
        raise UsageError(
            "git",
            f"git {found[0]}.{found[1]} is too old; qola needs git {want} or newer",
            "install a newer git (GIT_CONFIG_GLOBAL arrived in 2.32)",
        )
