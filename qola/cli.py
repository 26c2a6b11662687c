"""The command line: the only module that imports click and the one place errors become exits."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from qola.base.platforms import require_supported

    require_supported()
    # `python -m qola.cli checkout` is what CMake runs at every configure: a checkout with
    # nothing to do is answered from files before click is even imported (qola/noop.py).
    from qola.noop import answer

    _handoff = answer(sys.argv[1:])  # what it loaded and observed, when it stepped aside

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from qola import __version__
from qola.base import console
from qola.base.errors import EXIT_GIT, EXIT_INTERRUPTED, EXIT_USAGE, QolaError
from qola.commands import options
from qola.commands.options import Spec
from qola.commands.session import Common
from qola.output import cmake_env

if TYPE_CHECKING:
    from qola.manifest import Manifest
    from qola.sync.at_pin import Handoff

EXIT_CODES = """\b
Exit codes:
  0    success; the tree matches the manifest
  1    the tree does not match the manifest
  2    bad command line or invalid manifest
  3    a git operation failed (network, unknown commit, patch, lock, timeout)
  4    refused: local work would be lost, or a folder is not a repository
       git accepts; nothing was changed
  129  hung up (SIGHUP)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM)
"""

F = TypeVar("F", bound=Callable[..., Any])


class EnvironmentValueError(click.ClickException):
    """A value click refused that came from an environment variable: named as such."""

    exit_code = EXIT_USAGE

    def __init__(self, variable: str, problem: str, flag: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.hint = f"fix or unset {variable} (it gives {flag} its value)"

    def show(self, file: Any = None) -> None:
        console.message(f"qola: {self.message}\nhint: {self.hint}")


class Option(click.Option):
    """A click option whose bad environment value names the variable, not the flag, and
    whose environment variable is not read at all when the option was given before the
    command's name (`qola -m a.toml checkout` with QOLA_MANIFEST set): the command line
    wins over the environment on either side of the name, so a value there that nothing
    uses must not fail the command."""

    def resolve_envvar_value(self, ctx: click.Context) -> str | None:
        if self.name is not None and _given_before_the_command(ctx, self.name):
            return None
        # A flag's variable is read as a boolean word on every click qola supports: click
        # 8.2.0 turns any non-empty value into "on" (QOLA_OFFLINE=0 would go offline and
        # QOLA_OFFLINE=maybe pass), later versions convert it as the no-op does.
        if self.is_flag and isinstance(self.envvar, str):
            return os.environ.get(self.envvar) or None
        return super().resolve_envvar_value(ctx)

    def handle_parse_result(
        self, ctx: click.Context, opts: Any, args: list[str]
    ) -> tuple[Any, list[str]]:
        try:
            return super().handle_parse_result(ctx, opts, args)
        except click.BadParameter as error:
            # Where the value came from (click records it only after a value passes).
            source = self.consume_value(ctx, opts)[1]
            if source is ParameterSource.ENVIRONMENT and isinstance(self.envvar, str):
                flag = max(self.opts, key=len)
                problem = error.message
                if self.is_flag:
                    # click lists its words sorted, the empty one (unset) first: ", 0, 1, f".
                    value = os.environ.get(self.envvar, "")
                    problem = (f"{value!r} is neither on (1, true, yes, on) nor off (0, false, "
                               "no, off, or empty)")  # fmt: skip
                raise EnvironmentValueError(self.envvar, problem, flag) from None
            raise


def _click_type(spec: Spec) -> Any:
    if spec.kind == "file":
        return click.Path(dir_okay=False, path_type=Path)
    if spec.kind == "folder":
        return click.Path(file_okay=False, path_type=Path)
    if spec.kind == "choice":
        return click.Choice(list(spec.choices), case_sensitive=False)
    if spec.kind == "count":
        return click.IntRange(min=1)
    if spec.kind == "seconds":
        return click.FloatRange(min=0)
    assert spec.kind == "positive-seconds", spec.kind
    return click.FloatRange(min=0, min_open=True)


def option(spec: Spec, envvar: bool = True) -> Callable[[F], F]:
    """The click option of a Spec in qola/commands/options.py (the no-op reads the same table)."""
    kwargs: dict[str, Any] = {"help": spec.help, "cls": Option}
    if envvar and spec.envvar:
        kwargs["envvar"] = spec.envvar
    if spec.is_flag:
        kwargs["is_flag"] = True
    else:
        kwargs["type"] = _click_type(spec)
        if spec.default is not None:
            kwargs["default"] = spec.default
            kwargs["show_default"] = True
        if spec.metavar:
            kwargs["metavar"] = spec.metavar
    return click.option(*spec.flags, spec.dest, **kwargs)


def common_options(names: bool = True, groups: bool | None = None) -> Callable[[F], F]:
    """Add -m/--manifest, --root, --safe-directory, -v, -q (and NAME..., --group) to a command.

    The same options are accepted before the command's name (`qola -v checkout`): a
    value given after the name wins, then one given before it, then the environment.
    groups: --group GROUP, after the name only (default: with names, as every command
    that selects by name).
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
        shell_complete=complete_groups,
        help="Also select every dependency in GROUP (the manifest's groups = [...]); repeatable.",
    )(func)


def _common_options(func: F, with_names: bool) -> F:
    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        given = {spec.dest: kwargs.pop(spec.dest) for spec in options.COMMON}
        names = kwargs.pop("names", ())
        groups = kwargs.pop("groups", ())
        common = common_from(click.get_current_context(), given, tuple(names), tuple(groups))
        return func(common, **kwargs)

    decorated: Any = wrapper
    for spec in reversed(options.COMMON):
        decorated = option(spec)(decorated)
    if with_names:
        decorated = click.argument("names", nargs=-1, shell_complete=complete_names)(decorated)
    return decorated  # type: ignore[no-any-return]


def _before_the_command(ctx: click.Context, name: str) -> Any:
    """The value of a common option given before the command's name, if it was."""
    parent = ctx.parent
    return parent.params.get(name) if parent is not None else None


def _given_before_the_command(ctx: click.Context, name: str) -> bool:
    """True when the option `name` was typed before the command's name."""
    parent = ctx.parent
    if parent is None or name not in parent.params:
        return False
    return parent.get_parameter_source(name) is ParameterSource.COMMANDLINE


def common_from(
    ctx: click.Context, given: dict[str, Any], names: tuple[str, ...], groups: tuple[str, ...] = ()
) -> Common:
    """The common options, merged from both sides of the command's name."""
    value = dict(given)
    for spec in options.COMMON:
        earlier = _before_the_command(ctx, spec.dest)
        if spec.is_flag:
            value[spec.dest] = bool(value[spec.dest] or earlier)
        elif earlier is not None and ctx.get_parameter_source(spec.dest) in (
            ParameterSource.DEFAULT, ParameterSource.ENVIRONMENT, None
        ):
            value[spec.dest] = earlier
    searched_from = None
    manifest = value["manifest"]
    if manifest is None:
        searched_from = Path(os.getcwd())
        manifest = Path(options.find_manifest(os.fspath(searched_from))[0])
    from qola.base import console  # lazy: each command loads its own

    console.configure(value["verbose"], value["quiet"])
    return Common(
        manifest, value["root"], str(value["safe_directory"]).lower(), value["verbose"],
        value["quiet"], names, searched_from, groups,
    )  # fmt: skip


def complete_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of dependency names, read from the manifest (nothing when it fails)."""
    loaded = _manifest_to_complete(ctx)
    given = set(ctx.params.get(param.name or "") or ())
    found = [dep.name for dep in loaded.deps] if loaded else []
    return [CompletionItem(name) for name in found
            if name.startswith(incomplete) and name not in given]  # fmt: skip


def complete_groups(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Shell completion of --group: the groups the manifest's dependencies are in."""
    loaded = _manifest_to_complete(ctx)
    given = set(ctx.params.get(param.name or "") or ())
    found = sorted({group for dep in loaded.deps for group in dep.groups}) if loaded else []
    return [CompletionItem(group) for group in found
            if group.startswith(incomplete) and group not in given]  # fmt: skip


def _manifest_to_complete(ctx: click.Context) -> Manifest | None:
    """The manifest the command line being completed names, or None when it cannot be read."""
    from qola.manifest import load  # lazy: each command loads its own

    def pick(name: str) -> Any:
        return ctx.params.get(name) or _before_the_command(ctx, name)

    manifest = pick("manifest") or os.environ.get("QOLA_MANIFEST")
    if not manifest:
        manifest = options.find_manifest(os.getcwd())[0]
    root = pick("root") or os.environ.get("QOLA_ROOT")
    try:
        return load(Path(manifest), Path(root) if root else None)
    except (QolaError, OSError, ValueError):
        return None


def handle_errors(func: F) -> F:
    """Turn QolaError and Ctrl-C into the documented message and exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except QolaError as error:
            cmake_env.report(cmake_env.render(error))
            sys.exit(error.exit_code)
        except UnicodeDecodeError as error:
            cmake_env.report(f"qola: cannot decode a file as UTF-8: {error.reason}")
            sys.exit(EXIT_USAGE)
        except OSError as error:
            where = error.filename or "qola"
            cmake_env.report(f"qola: {where}: {error.strerror or error}")
            sys.exit(EXIT_GIT)
        except KeyboardInterrupt:
            # Caught here: click's own handling would say "Aborted!" and exit 1.
            cmake_env.report("qola: interrupted")
            sys.exit(EXIT_INTERRUPTED)

    return wrapper  # type: ignore[return-value]


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="qola")
@option(options.MANIFEST, envvar=False)
@option(options.ROOT, envvar=False)
@click.option(
    *options.SAFE_DIRECTORY.flags,
    options.SAFE_DIRECTORY.dest,
    cls=Option,
    type=click.Choice(list(options.SAFE_DIRECTORY.choices), case_sensitive=False),
    help=options.SAFE_DIRECTORY.help,
)
@option(options.VERBOSE)
@option(options.QUIET)
def cli(**_common: Any) -> None:
    """Pin a CMake project's git dependencies to exact commits.

    The common options (-m, --root, --safe-directory, -v, -q) may come before the
    command's name or after it.
    """


def format_option(*choices: str) -> Callable[[F], F]:
    """--format: text for people, or a machine-readable form."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default="text",
        show_default=True,
        help="Output format: " + ", ".join(choices) + " (json: a versioned schema).",
    )


lock_timeout_option = option(options.LOCK_TIMEOUT)
fetch_timeout_option = option(options.FETCH_TIMEOUT)
cmake_out_option = option(options.CMAKE_OUT)
offline_option = option(options.OFFLINE)


@cli.command(epilog=EXIT_CODES)
@common_options()
@offline_option
@option(options.FORCE)
@option(options.JOBS)
@option(options.CACHE)
@cmake_out_option
@lock_timeout_option
@fetch_timeout_option
@format_option("text", "json")
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
    fmt: str,
) -> None:
    """Bring every dependency (or NAMES) to its pinned commit."""
    from qola.commands import checkout as checking  # lazy: each command loads its own
    from qola.sync.at_pin import Handoff  # lazy: imported with the command it is for

    handoff = click.get_current_context().obj  # the no-op's, given to main()
    options = checking.CheckoutOptions(
        offline, force, jobs, cache, cmake_out, lock_timeout, fetch_timeout, fmt
    )
    sys.exit(checking.checkout(common, options, handoff if isinstance(handoff, Handoff) else None))


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "junit", "github"]),
    default="text",
    show_default=True,
    help="Output format: text, json (versioned schema), junit (XML), github (annotations "
    "and, with GITHUB_STEP_SUMMARY set, a job summary).",
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
    from qola.commands import verify as verifying  # lazy: each command loads its own

    if manifest_only and (strict or cmake_out is not None):
        other = "--strict" if strict else "--cmake-out"
        raise click.UsageError(f"{other} needs a checkout; it cannot go with --manifest-only")
    if staged and not manifest_only:
        raise click.UsageError("--staged checks the index: it goes with --manifest-only")
    options = verifying.VerifyOptions(fmt, strict, remote, manifest_only, staged, cmake_out)
    sys.exit(verifying.verify(common, options))


@cli.command(epilog=EXIT_CODES)
@common_options()
@format_option("text", "json")
@handle_errors
def status(common: Common, fmt: str) -> None:
    """One line per dependency: pin, HEAD, state, gitlink, dirt."""
    from qola.commands.status import status as command  # lazy: each command loads its own

    sys.exit(command(common, fmt))


@cli.command(epilog=EXIT_CODES)
@common_options(names=False, groups=True)
@click.argument("name", required=False, shell_complete=complete_names)
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
@offline_option
@click.option("--force", is_flag=True, help="Check out even over local work (saved first).")
@lock_timeout_option
@fetch_timeout_option
@format_option("text", "json")
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
    fmt: str,
) -> None:
    """Move NAME's pin to REF (or with --all every tracked pin to its tip): resolve, show the
    log, rewrite the pin, check out."""
    from qola.commands import bump as bumping  # lazy: each command loads its own

    opts = bumping.BumpOptions(
        ref=ref, dry_run=dry_run, do_commit=do_commit, no_checkout=no_checkout,
        allow_downgrade=allow_downgrade, offline=offline, force=force,
        lock_timeout=lock_timeout, fetch_timeout=fetch_timeout, fmt=fmt,
    )  # fmt: skip
    if fmt == "json" and not dry_run:
        raise click.UsageError("--format json describes a bump without making it: add --dry-run")
    if every:
        if name is not None or ref is not None:
            raise click.UsageError("--all bumps every tracked pin to its tip: no NAME, no --to")
        if fmt == "json":
            raise click.UsageError("--format json describes one bump: give NAME, not --all")
        sys.exit(bumping.bump_all(common, opts))
    if name is None:
        raise click.UsageError("give the NAME of the dependency to bump, or --all")
    if common.groups:
        raise click.UsageError("--group selects what --all bumps: add --all, or give no --group")
    sys.exit(bumping.bump(common, name, opts))


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@handle_errors
def freeze(common: Common, dry_run: bool) -> None:
    """Rewrite pins (all, or NAMES) to the commits checked out now, in full."""
    from qola.commands.freeze import freeze as command  # lazy: each command loads its own

    sys.exit(command(common, dry_run))


@cli.command(epilog=EXIT_CODES)
@click.option(
    "-m",
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="QOLA_MANIFEST",
    cls=Option,
    help="The manifest file to write. Default: qola.toml in the current folder.",
)
@click.option("--dry-run", is_flag=True, help="Print the manifest; write nothing.")
@handle_errors
def init(manifest: Path | None, dry_run: bool) -> None:
    """Write a new manifest pinning the root's submodules at their recorded commits."""
    from qola.commands.init import init as command  # lazy: each command loads its own

    ctx = click.get_current_context()
    earlier = _before_the_command(ctx, "manifest")
    if earlier is not None and ctx.get_parameter_source("manifest") is not (
        ParameterSource.COMMANDLINE
    ):
        manifest = earlier
    sys.exit(command(manifest or Path(options.MANIFEST_NAME), dry_run))


@cli.command(
    "exec", epilog=EXIT_CODES.replace("Exit codes:", "Exit codes (CMD's own once it ran):")
)
@common_options(names=False)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@handle_errors
def exec_(common: Common, command: tuple[str, ...]) -> None:
    """Run CMD under the safe.directory shim: qola exec [-m M] -- CMD [ARG...].

    The shim trusts the root, every dependency and every nested submodule
    (none whose .git leads out of the project), so a build step that runs git
    in them works when the tree belongs to another user. CMD's git runs no
    hook, no fsmonitor and no automatic gc (yours included), and no command
    those repositories' own config names. CMD's exit code is passed through.
    """
    from qola.commands.exec import exec_ as run  # lazy: each command loads its own

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
    from qola.commands.diff import diff as command  # lazy: each command loads its own

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
    help="Exit 1 when a pin is more than N commits behind (10), or when the oldest change "
    "it lacks landed on what it follows more than N days ago (30d).",
)
@fetch_timeout_option
@handle_errors
def outdated(common: Common, fmt: str, fail_if_behind: str | None, fetch_timeout: float) -> None:
    """How far each pin (or NAMES) is behind what it follows upstream.

    For each dependency: its track (else the remote's default branch), the tip there,
    how many commits the pin lacks and for how many days the oldest of them has
    waited since it landed there (on the tip's first-parent line). Fetches commits
    only, into a temporary repository, back to the pin's date where it can; never
    touches the dependencies. -v lists the commits.
    """
    from qola.commands.outdated import outdated as command  # lazy: each command loads its own

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
    from qola.commands.foreach import foreach as command  # lazy: each command loads its own

    sys.exit(command(common, click.get_current_context().meta.get("qola.command", ()),
                     keep_going, jobs))  # fmt: skip


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@handle_errors
def demo(folder: Path | None) -> None:
    """An offline walk-through on throwaway repositories, in FOLDER (default: a new temp folder)."""
    from qola.commands.demo import run  # lazy: each command loads its own

    sys.exit(run(folder, echo=click.echo))


@cli.command("cmake-dir")
@handle_errors
def cmake_dir() -> None:
    """Print the folder holding QoLAConfig.cmake (for CMAKE_PREFIX_PATH)."""
    from qola.output.cmake_results import cmake_dir as folder  # lazy: each command loads its own

    click.echo(str(folder()))


def main(handoff: Handoff | None = None) -> None:
    """The console script; handoff: what the no-op loaded and observed before it stepped
    aside, for checkout to start from."""
    cli(prog_name="qola", obj=handoff)


if __name__ == "__main__":
    main(_handoff)
