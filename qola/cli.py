"""The command line: the only module that imports click and the one place errors become exits."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from qola.platforms import require_supported

    require_supported()
    # `python -m qola.cli checkout` is what CMake runs at every configure: a checkout with
    # nothing to do is answered from files before click is even imported (qola/noop.py).
    from qola.noop import answer

    answer(sys.argv[1:])

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from qola import __version__
from qola.errors import EXIT_GIT, EXIT_INTERRUPTED, EXIT_USAGE, QolaError
from qola.session import Common

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


def common_options(names: bool = True, groups: bool | None = None) -> Callable[[F], F]:
    """Add -m/--manifest, --root, --safe-directory, -v, -q (and NAME..., --group) to a command.

    groups: --group GROUP (default: with names, as every command that selects by name).
    """

    def decorate(func: F) -> F:
        if names if groups is None else groups:
            func = _group_option(func)  # applied first: listed after the common options
        return _common_options(func, names)

    return decorate


def _group_option(func: F) -> F:
    return click.option(
        "--group",
        "groups",
        multiple=True,
        metavar="GROUP",
        help="Also select every dependency in GROUP (the manifest's groups = [...]); repeatable.",
    )(func)


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
        groups: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> Any:
        common = Common(manifest, root, safe_directory.lower(), verbose, quiet, names, groups)
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
    from qola.commands.checkout import checkout as command

    sys.exit(
        command(common, offline, force, jobs, cache, cmake_out, lock_timeout, fetch_timeout)
    )


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
    from qola.commands.verify import verify as command

    if manifest_only and (strict or cmake_out is not None):
        other = "--strict" if strict else "--cmake-out"
        raise click.UsageError(f"{other} needs a checkout; it cannot go with --manifest-only")
    if staged and not manifest_only:
        raise click.UsageError("--staged checks the index: it goes with --manifest-only")
    sys.exit(command(common, fmt, strict, remote, manifest_only, staged, cmake_out))


@cli.command(epilog=EXIT_CODES)
@common_options()
@handle_errors
def status(common: Common) -> None:
    """One line per dependency: pin, HEAD, state, gitlink, dirt."""
    from qola.commands.status import status as command

    sys.exit(command(common))


@cli.command(epilog=EXIT_CODES)
@common_options(names=False, groups=True)
@click.argument("name", required=False)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Bump every dependency that has a track (or those of --group), all or nothing.",
)
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
    name: str | None,
    every: bool,
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
    """Move NAME's pin to REF (or with --all every tracked pin to its tip): resolve, show the
    log, rewrite the pin, check out."""
    from qola.commands.bump import bump as command

    if every:
        from qola.commands.bump import bump_all

        if name is not None or ref is not None:
            raise click.UsageError("--all bumps every tracked pin to its tip: no NAME, no --to")
        sys.exit(bump_all(common, dry_run, do_commit, no_checkout, allow_downgrade, offline,
                          force, lock_timeout, fetch_timeout))  # fmt: skip
    if name is None:
        raise click.UsageError("give the NAME of the dependency to bump, or --all")
    if common.groups:
        raise click.UsageError("--group selects what --all bumps: add --all, or give no --group")
    code = command(
        common, name, ref, dry_run, do_commit, no_checkout, allow_downgrade, offline, force,
        lock_timeout, fetch_timeout,
    )  # fmt: skip
    sys.exit(code)


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@handle_errors
def freeze(common: Common, dry_run: bool) -> None:
    """Rewrite pins (all, or NAMES) to the commits checked out now, in full."""
    from qola.commands.freeze import freeze as command

    sys.exit(command(common, dry_run))


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
    from qola.commands.init import init as command

    sys.exit(command(manifest, dry_run))


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
    from qola.commands.exec import exec_ as run

    sys.exit(run(common, command))


@cli.command(epilog=EXIT_CODES.replace("the tree does not match the manifest", "(not used)"))
@common_options(names=False)
@click.argument("rev", required=False, default="HEAD")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output format: text, json (versioned schema), markdown (a pull-request comment).",
)
@fetch_timeout_option
@handle_errors
def diff(common: Common, rev: str, fmt: str, fetch_timeout: float) -> None:
    """The pins at REV (default: HEAD) against the work tree's, with the commits between.

    Each pin added, removed or moved; for a moved one the commits between old and new
    (subject, author, date), read from the dependency when it has them, else fetched
    without blobs into a temporary repository. A downgrade or a move to a commit that
    does not descend from the old pin is flagged. -v adds the --stat summary. Writes
    nothing; exit 3 when some history could not be fetched (the rest is printed).
    """
    from qola.commands.diff import diff as command

    sys.exit(command(common, rev, fmt, fetch_timeout))


@cli.command(
    epilog=EXIT_CODES.replace(
        "the tree does not match the manifest", "a pin is further behind than --fail-if-behind"
    )
)
@common_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format: text, or json (versioned schema).",
)
@click.option(
    "--fail-if-behind",
    metavar="N|Nd",
    help="Exit 1 when a pin is more than N commits behind (10), or when the oldest commit "
    "it lacks is more than N days old (30d).",
)
@fetch_timeout_option
@handle_errors
def outdated(common: Common, fmt: str, fail_if_behind: str | None, fetch_timeout: float) -> None:
    """How far each pin (or NAMES) is behind what it follows upstream.

    For each dependency: its track (else the remote's default branch), the tip there,
    how many commits the pin lacks and for how many days the oldest of them has
    waited. Fetches commits only, into a temporary repository, back to the pin's date
    where it can; never touches the dependencies. -v lists the commits.
    """
    from qola.commands.outdated import outdated as command

    sys.exit(command(common, fmt, fail_if_behind, fetch_timeout))


class _CommandAfterDashes(click.Command):
    """Keeps every word after the first `--` for the command to run; NAMES come before it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["qola.command"] = tuple(args[at + 1 :])
            args = args[:at]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "-- CMD [ARG]..."]


@cli.command(cls=_CommandAfterDashes, epilog=EXIT_CODES.replace(
    "Exit codes:", "Exit codes (the first failed CMD's once one ran):"))  # fmt: skip
@common_options()
@click.option("--keep-going", is_flag=True, help="Go on after a failure.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Dependencies to run CMD in at once (each one's output is kept and shown whole).",
)
@handle_errors
def foreach(common: Common, keep_going: bool, jobs: int) -> None:
    """Run CMD in each dependency's folder: qola foreach [NAMES] [--group G] -- CMD [ARG...].

    Under the safe.directory shim, with QOLA_NAME, QOLA_PATH and QOLA_COMMIT (the pin)
    in CMD's environment. Stops at the first failure unless --keep-going; the exit code
    is the first failure's. A dependency that is not checked out is skipped.
    """
    from qola.commands.foreach import foreach as command

    sys.exit(command(common, click.get_current_context().meta.get("qola.command", ()),
                     keep_going, jobs))  # fmt: skip


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@handle_errors
def demo(folder: Path | None) -> None:
    """An offline walk-through on throwaway repositories, in FOLDER (default: a new temp folder)."""
    from qola.demo import run

    sys.exit(run(folder, echo=click.echo))


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
