"""The command line: the only module that imports click and the one place errors become exits."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # `python -m qola.cli checkout` is what CMake runs at every configure: a checkout with
    # nothing to do is answered from files before click is even imported (qola/noop.py).
    from qola.noop import answer

    answer(sys.argv[1:])

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from qola import __version__
from qola.errors import EXIT_GIT, EXIT_INTERRUPTED, EXIT_USAGE, QolaError

EXIT_CODES = """\b
Exit codes:
  0    success; the tree matches the manifest
  1    the tree does not match the manifest
  2    bad command line or invalid manifest
  3    a git operation failed (network, unknown commit, lock)
  4    refused: local work would be lost; nothing was changed
  130  interrupted
"""

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Common:
    """The options every command that reads a manifest takes."""

    manifest: Path
    root: Path | None
    safe_directory: str
    verbose: bool
    quiet: bool
    names: tuple[str, ...]


def common_options(names: bool = True) -> Callable[[F], F]:
    """Add -m/--manifest, --root, --safe-directory, -v, -q (and NAME...) to a command."""

    def decorate(func: F) -> F:
        return _common_options(func, names)

    return decorate


def _common_options(func: F, with_names: bool) -> F:
    @click.option(
        "-m",
        "--manifest",
        type=click.Path(dir_okay=False, path_type=Path),
        default="qola.toml",
        show_default=True,
        envvar="QOLA_MANIFEST",
        help="The manifest file (env QOLA_MANIFEST).",
    )
    @click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="QOLA_ROOT",
        help="Folder the manifest's paths are relative to (env QOLA_ROOT). "
        "Default: the top of the git repository holding the manifest.",
    )
    @click.option(
        "--safe-directory",
        type=click.Choice(["scoped", "all", "off"], case_sensitive=False),
        default="scoped",
        show_default=True,
        envvar="QOLA_SAFE_DIRECTORY",
        help="Which repositories git may trust when they belong to another user "
        "(env QOLA_SAFE_DIRECTORY).",
    )
    @click.option("-v", "--verbose", is_flag=True, help="Say which path each step took.")
    @click.option("-q", "--quiet", is_flag=True, help="Only errors and results.")
    @functools.wraps(func)
    def wrapper(
        manifest: Path,
        root: Path | None,
        safe_directory: str,
        verbose: bool,
        quiet: bool,
        names: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> Any:
        common = Common(manifest, root, safe_directory.lower(), verbose, quiet, names)
        return func(common, **kwargs)

    if with_names:
        return click.argument("names", nargs=-1)(wrapper)  # type: ignore[return-value]
    return wrapper  # type: ignore[return-value]


def handle_errors(func: F) -> F:
    """Turn QolaError and Ctrl-C into the documented message and exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except QolaError as error:
            click.echo(error.render(), err=True)
            sys.exit(error.exit_code)
        except UnicodeDecodeError as error:
            click.echo(f"qola: cannot decode a file as UTF-8: {error.reason}", err=True)
            sys.exit(EXIT_USAGE)
        except OSError as error:
            where = error.filename or "qola"
            click.echo(f"qola: {where}: {error.strerror or error}", err=True)
            sys.exit(EXIT_GIT)
        except KeyboardInterrupt:
            # Caught here: click's own handling would say "Aborted!" and exit 1.
            click.echo("qola: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)

    return wrapper  # type: ignore[return-value]


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="qola")
def cli() -> None:
    """Pin a CMake project's git dependencies to exact commits."""


@dataclass
class Session:
    """A loaded manifest, the selected deps and a git runner, for one command."""

    manifest: Any
    deps: Any
    runner: Any
    common: Common
    env: Any  # the shim: git's environment overlay

    def note(self, message: str) -> None:
        if not self.common.quiet:
            click.echo(f"qola: {message}", err=True)

    def debug(self, message: str) -> None:
        if self.common.verbose:
            click.echo(f"qola: {message}", err=True)


@contextmanager
def session(
    common: Common, resolve_pins: bool = True, staged: Any = None
) -> Iterator[Session]:
    """Load the manifest, select deps, and run git under the safe.directory shim.

    resolve_pins=False leaves abbreviated legacy pins as written (no checkout is read).
    staged (a pincheck.Staged): read the manifest from the index instead of the file.
    """
    from qola import git, manifest, pincheck, pins
    from qola.shim import install_signal_handlers, shim

    git.scrub_environment()
    loaded = None
    if staged is None:
        loaded = manifest.load(common.manifest, common.root)
        roots = [loaded.root]
    else:
        roots = [manifest.repository_top(Path(os.path.abspath(common.manifest)).parent)]
    restore_signals = install_signal_handlers()
    try:
        with shim(common.safe_directory, roots) as env:
            # The shim trusts each repository at the moment qola first runs git in it.
            runner = git.Runner(env=env, trust=lambda path: env.add(path))
            if loaded is None:
                loaded = pincheck.load_staged(common.manifest, common.root, runner, staged)
            deps = loaded.select(common.names)
            for dep in deps:
                env.add_clone_source(dep.url, loaded.root)
            sess = Session(loaded, deps, runner, common, env)
            for warning in loaded.warnings:
                click.echo(f"qola: warning: {warning}", err=True)
            if resolve_pins:
                sess.deps = pins.resolve(loaded, sess.deps, runner)
            try:
                yield sess
            finally:
                for line in runner.log:
                    sess.debug(f"ran: {line}")
    finally:
        restore_signals()


lock_timeout_option = click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    envvar="QOLA_LOCK_TIMEOUT",
    metavar="SECONDS",
    help="How long to wait for another qola run on this root (0: not at all, inf: for ever; "
    "env QOLA_LOCK_TIMEOUT). Then exit 3.",
)
fetch_timeout_option = click.option(
    "--fetch-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=600.0,
    show_default=True,
    envvar="QOLA_FETCH_TIMEOUT",
    metavar="SECONDS",
    help="Stop any one git network command (clone, fetch, ls-remote) after this long "
    "(inf: never; env QOLA_FETCH_TIMEOUT). Then exit 3.",
)

cmake_out_option = click.option(
    "--cmake-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write QOLA_<NAME>_SHA/_SOURCE_DIR for CMake here (only when it changes).",
)


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option("--offline", is_flag=True, envvar="QOLA_OFFLINE", help="Never use the network.")
@click.option("--force", is_flag=True, help="Move dependencies even over local work (saved first).")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    envvar="QOLA_JOBS",
    help="Dependencies to clone or fetch at once.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="QOLA_CACHE_DIR",
    help="Folder of shared bare mirrors, one per URL; clones borrow their objects.",
)
@cmake_out_option
@lock_timeout_option
@fetch_timeout_option
@handle_errors
def checkout(
    common: Common,
    offline: bool,
    force: bool,
    jobs: int,
    cache: Path | None,
    cmake_out: Path | None,
    lock_timeout: float,
    fetch_timeout: float,
) -> None:
    """Bring every dependency (or NAMES) to its pinned commit."""
    from qola.checkout import checkout as run_checkout
    from qola.plan import Options

    with session(common) as sess:
        sess.runner.timeout = _finite(fetch_timeout)
        options = Options(offline, force, jobs, cache.absolute() if cache else None)
        result = run_checkout(
            sess.manifest, sess.deps, sess.runner, options, sess.note, lock_timeout
        )
        for dep in sess.deps:
            outcome = result.outcomes.get(dep.name)
            if outcome is not None:
                for note in outcome.notes:
                    (sess.note if "saved" in note else sess.debug)(f"{dep.name}: {note}")
            if dep.name in result.failures:
                continue
            what = "; ".join(outcome.actions) if outcome and outcome.actions else "up to date"
            state = result.states.get(dep.name)
            if state is not None and state.overridden:
                what = f"overridden by {state.worktree}"
            click.echo(f"{dep.name} {dep.path} {dep.commit[:12]} {what}")
        for dep in sess.deps:  # in manifest order, however --jobs finished them
            if dep.name in result.failures:
                click.echo(result.failures[dep.name].render(), err=True)
        if result.failures:
            failed = ", ".join(result.failures)
            click.echo(
                f"qola: {len(result.failures)} of {len(sess.deps)} dependencies failed: {failed}",
                err=True,
            )
        if result.exit_code == 0 and cmake_out is not None:
            _write_cmake(cmake_out, sess)
        sys.exit(result.exit_code)


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "junit", "github"]),
    default="text",
    show_default=True,
    help="Output format: text, json (versioned schema), junit (XML), github (annotations).",
)
@click.option("--strict", is_flag=True, help="Untracked files count as dirt too.")
@click.option(
    "--remote",
    is_flag=True,
    help="Also check, over the network, that each pin is in the history of its track "
    "(else the remote's default branch) upstream.",
)
@click.option(
    "--manifest-only",
    is_flag=True,
    help="Check only the manifest and the root's gitlinks (full SHAs, agreement); "
    "read no dependency folder. For pre-commit and CI before checkout.",
)
@click.option(
    "--staged",
    is_flag=True,
    help="With --manifest-only: check what the next commit records, the manifest and "
    "gitlinks staged in the index. Automatic when run by pre-commit (PRE_COMMIT=1).",
)
@cmake_out_option
@handle_errors
def verify(
    common: Common,
    fmt: str,
    strict: bool,
    remote: bool,
    manifest_only: bool,
    staged: bool,
    cmake_out: Path | None,
) -> None:
    """Check, read-only, that the tree matches the manifest (offline unless --remote)."""
    from qola import pincheck
    from qola.verify import verify as run_verify

    if manifest_only and (strict or cmake_out is not None):
        other = "--strict" if strict else "--cmake-out"
        raise click.UsageError(f"{other} needs a checkout; it cannot go with --manifest-only")
    if staged and not manifest_only:
        raise click.UsageError("--staged checks the index: it goes with --manifest-only")
    index = pincheck.staged_mode(staged, os.environ) if manifest_only else None
    with session(common, resolve_pins=not manifest_only, staged=index) as sess:
        if manifest_only:
            report = pincheck.check(sess.manifest, sess.deps, sess.runner, index)
        else:
            report = run_verify(sess.manifest, sess.deps, sess.runner, strict)
        if remote:
            from qola import remote as upstream

            report = upstream.add_problems(report, sess.runner)
        click.echo(_render(fmt, report), nl=False)
        if cmake_out is not None:
            _write_cmake(cmake_out, sess)
        sys.exit(0 if report.ok else 1)


def _render(fmt: str, report: Any) -> str:
    from qola import render

    if fmt == "json":
        return render.as_json(report)
    if fmt == "junit":
        return render.junit(report, _repository_path(report.manifest.path))
    if fmt == "github":
        return render.github(report, _repository_path(report.manifest.path))
    return render.text(report)


def _repository_path(path: Path) -> str:
    """The manifest's path from the top of its git repository, as GitHub names files."""
    from qola.manifest import repository_top

    return Path(os.path.relpath(path, repository_top(path.parent))).as_posix()


@cli.command(epilog=EXIT_CODES)
@common_options()
@handle_errors
def status(common: Common) -> None:
    """One line per dependency: pin, HEAD, state, gitlink, dirt."""
    from qola.verify import DIRTY, GITLINK
    from qola.verify import verify as run_verify

    with session(common) as sess:
        report = run_verify(sess.manifest, sess.deps, sess.runner)
        rows = [("NAME", "PATH", "PIN", "HEAD", "STATE", "GITLINK", "DIRTY")]
        for dep in report.deps:
            kinds = [p.kind for p in dep.problems]
            state = next((k for k in kinds if k not in (DIRTY, GITLINK)), "ok")
            rows.append(
                (
                    dep.dep.name,
                    dep.path,
                    dep.dep.commit[:12],
                    dep.head[:12] if dep.head else "-",
                    state,
                    "differs" if GITLINK in kinds else "ok",
                    "yes" if DIRTY in kinds else "no",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        sys.exit(0 if report.ok else 1)


@cli.command(epilog=EXIT_CODES)
@common_options(names=False)
@click.argument("name")
@click.option(
    "--to",
    "ref",
    metavar="REF",
    help="Branch, tag or SHA (default: track, else the remote's default branch).",
)
@click.option(
    "--dry-run", is_flag=True, help="Show the change; write nothing (no clone, no fetch into it)."
)
@click.option("--commit", "do_commit", is_flag=True, help="Commit the manifest (and gitlink).")
@click.option(
    "--no-checkout",
    is_flag=True,
    help="Do not check the new pin out: write the manifest and stage it, nothing else.",
)
@click.option(
    "--allow-downgrade", is_flag=True, help="Allow a pin that does not descend from the old one."
)
@click.option("--offline", is_flag=True, envvar="QOLA_OFFLINE", help="Never use the network.")
@click.option("--force", is_flag=True, help="Check out even over local work (saved first).")
@lock_timeout_option
@fetch_timeout_option
@handle_errors
def bump(
    common: Common,
    name: str,
    ref: str | None,
    dry_run: bool,
    do_commit: bool,
    no_checkout: bool,
    allow_downgrade: bool,
    offline: bool,
    force: bool,
    lock_timeout: float,
    fetch_timeout: float,
) -> None:
    """Move NAME's pin to REF: resolve, show the log, rewrite the pin, check out."""
    import dataclasses

    from qola import bump as pins
    from qola.checkout import checkout as run_checkout
    from qola.plan import Options

    common = dataclasses.replace(common, names=(name,))
    with session(common) as sess:
        sess.runner.timeout = _finite(fetch_timeout)
        [dep] = sess.deps
        worktree = sess.manifest.root / dep.path
        options = Options(offline, force)
        # Resolved with ls-remote and described from a throw-away repository: nothing is
        # written before the checkout (none at all with --dry-run or --no-checkout).
        new, source = pins.resolve(sess.runner, dep, worktree, ref, offline)
        move = pins.Move(dep, dep.commit, new, ref or dep.track or "the default branch")
        move = pins.describe(sess.runner, move, worktree, source, offline, allow_downgrade)
        new = move.new
        if move.old == move.new:
            click.echo(f"{dep.name} is already at {new[:12]} ({move.ref})")
            return
        click.echo(move.headline())
        for line in move.log:
            click.echo(f"  {line}")
        if move.count > len(move.log):
            click.echo(f"  ... and {move.count - len(move.log)} more")
        if dry_run:
            click.echo("dry run: nothing was written")
            return
        moved = dataclasses.replace(dep, commit=new)
        # The edit is computed (and checked) before anything changes, and written only
        # after the checkout succeeded: a refused or failed checkout writes nothing.
        raw, text = pins.read_manifest(sess.manifest)
        new_text = pins.edit_pins(sess.manifest, text, {dep: new})
        if not no_checkout:
            result = run_checkout(
                sess.manifest, (moved,), sess.runner, options, sess.note, lock_timeout
            )
            _exit_on_failures(result, after=f"{sess.manifest.path.name} was left unchanged: ")
        gitlink = pins.root_gitlink(sess.runner, sess.manifest, dep)
        pins.write_manifest(sess.manifest, raw, new_text)
        sess.note(f"{dep.name}: {sess.manifest.path.name} now pins {new}")
        if not do_commit:
            _stage(sess, raw, {dep: new}, {dep: gitlink})
        elif gitlink is not None:
            pins.stage_gitlink(sess.runner, sess.manifest, dep, new)
        if do_commit:
            links = {dep.path: new} if gitlink is not None else {}
            sha = pins.commit(sess.runner, sess.manifest, move.message(), links)
            click.echo(f"committed {sha[:12]}: Bump {dep.name} from {move.old[:7]} to {new[:7]}")


def _stage(sess: Session, raw: bytes, pins: dict[Any, str], gitlinks: dict[Any, Any]) -> None:
    """Stage the new pins with their gitlinks, so that the next `git commit` has both."""
    from qola import bump

    for dep, sha in pins.items():
        if gitlinks.get(dep) is not None:
            bump.stage_gitlink(sess.runner, sess.manifest, dep, sha)
            sess.note(f"{dep.name}: staged the gitlink {dep.path} at {sha[:12]}")
    why_not = bump.stage_manifest(sess.runner, sess.manifest, raw, pins)
    name = sess.manifest.path.name
    sess.note(f"staged {name}" if why_not is None else f"{name} was not staged: {why_not}")


def _finite(seconds: float) -> float | None:
    return None if seconds == float("inf") else seconds


def _exit_on_failures(result: Any, after: str = "") -> None:
    for error in result.failures.values():
        click.echo(error.render(), err=True)
    if result.failures:
        if after:
            click.echo(f"qola: the checkout failed; {after}nothing was committed", err=True)
        sys.exit(result.exit_code)


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@handle_errors
def freeze(common: Common, dry_run: bool) -> None:
    """Rewrite pins (all, or NAMES) to the commits checked out now, in full."""
    from qola import bump as pins

    with session(common) as sess:
        changes = {}
        for dep in sess.deps:
            head = pins.current_head(sess.runner, sess.manifest, dep)
            if head != dep.commit or dep.abbreviated_from:
                changes[dep] = head
                click.echo(f"{dep.name} {dep.commit[:12]} -> {head[:12]}")
        if not changes:
            click.echo("every pin already matches what is checked out")
            return
        if dry_run:
            click.echo("dry run: nothing was written")
            return
        raw, text = pins.read_manifest(sess.manifest)
        gitlinks = {dep: pins.root_gitlink(sess.runner, sess.manifest, dep) for dep in changes}
        pins.write_manifest(sess.manifest, raw, pins.edit_pins(sess.manifest, text, changes))
        _stage(sess, raw, changes, gitlinks)


@cli.command(epilog=EXIT_CODES)
@click.option(
    "-m",
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    default="qola.toml",
    show_default=True,
    envvar="QOLA_MANIFEST",
    help="The manifest file to write.",
)
@click.option("--dry-run", is_flag=True, help="Print the manifest; write nothing.")
@handle_errors
def init(manifest: Path, dry_run: bool) -> None:
    """Write a new manifest pinning the root's submodules at their recorded commits."""
    from qola import bump as pins
    from qola import git
    from qola.errors import UsageError
    from qola.manifest import repository_top

    git.scrub_environment()
    path = Path(os.path.abspath(manifest))
    if path.exists():
        raise UsageError(
            str(path), "already exists; nothing was written", "edit it, or use qola bump/freeze"
        )
    root = repository_top(path.parent)
    text = pins.init_text(git.Runner(), root)
    if dry_run:
        click.echo(text, nl=False)
        return
    with open(path, "x", encoding="utf-8", newline="") as out:
        out.write(text)
    click.echo(f"wrote {path}")


@cli.command(
    "exec", epilog=EXIT_CODES.replace("Exit codes:", "Exit codes (CMD's own once it ran):")
)
@common_options(names=False)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@handle_errors
def exec_(common: Common, command: tuple[str, ...]) -> None:
    """Run CMD under the safe.directory shim: qola exec [-m M] -- CMD [ARG...].

    The shim trusts the root, every dependency and every nested submodule, so
    a build step that runs git in them works when the tree belongs to another
    user. CMD's exit code is passed through.
    """
    import os
    import subprocess

    from qola.observe import observe

    with session(common) as sess:
        for dep in sess.deps:
            state = observe(sess.manifest, dep, sess.runner)
            sess.env.add(state.worktree)
            for top in state.submodules or ():
                sess.env.add(*(state.worktree / sub.path for sub in top.walk()))
        try:
            proc = subprocess.run(list(command), env={**os.environ, **sess.env}, check=False)
        except OSError as error:
            from qola.errors import UsageError

            raise UsageError(command[0], f"cannot run it: {error.strerror}") from None
    sys.exit(proc.returncode if proc.returncode >= 0 else 128 - proc.returncode)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@handle_errors
def demo(folder: Path | None) -> None:
    """An offline walk-through on throwaway repositories, in FOLDER (default: a new temp folder)."""
    from qola.demo import run

    sys.exit(run(folder, echo=click.echo))


def _write_cmake(path: Path, sess: Session) -> None:
    from qola import stamp
    from qola.cmake_out import write_for

    write_for(path, sess.manifest, sess.deps, stamp.proven(sess.manifest, sess.deps))


@cli.command("cmake-dir")
def cmake_dir() -> None:
    """Print the folder holding QoLAConfig.cmake (for CMAKE_PREFIX_PATH)."""
    from qola.cmake_out import cmake_dir as folder

    click.echo(str(folder()))


def main() -> None:
    """The console script."""
    cli(prog_name="qola")


if __name__ == "__main__":
    main()
