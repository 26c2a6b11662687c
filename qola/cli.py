"""The command line: every command and its options, declared with click (cli_options.py holds
the option plumbing and the one place errors become exits)."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from qola.base.platforms import require_supported

    require_supported()
    # `python -m qola.cli checkout` is what CMake runs at every configure: a checkout with
    # nothing to do is answered from files before click is even imported (qola/noop.py).
    from qola.noop import answer

    _handoff = answer(sys.argv[1:])  # what it loaded and observed, when it stepped aside
    from qola.base.requirements import require

    require()  # click and the rest, before the first import of one

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from qola import __version__
from qola.cli_options import (
    EXIT_CODES as EXIT_CODES,
)
from qola.cli_options import (
    Option,
    allow_unsigned_option,
    before_the_command,
    cmake_out_option,
    common_options,
    complete_names,
    fetch_timeout_option,
    format_option,
    handle_errors,
    lock_timeout_option,
    offline_option,
    option,
)
from qola.commands import options
from qola.commands.session import Common

if TYPE_CHECKING:
    from qola.sync.at_pin import Handoff

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


@cli.command(
    epilog=EXIT_CODES.replace(
        "the tree does not match the manifest",
        "the tree does not match the manifest (qola verify fails): nothing\n       "
        "written, unless --allow-drift",
    ).replace(
        "bad command line or invalid manifest",
        "bad command line or invalid manifest, or the format's library\n       "
        "(qola's sbom extra) is not installed",
    )
)
@common_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["cyclonedx", "spdx"]),
    default="cyclonedx",
    show_default=True,
    help="CycloneDX 1.6 JSON or SPDX 2.3 JSON.",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="FILE",
    help="Write the document to FILE (default, or FILE -: stdout).",
)
@click.option(
    "--manifest-only",
    is_flag=True,
    help="From the manifest and the root's gitlinks alone (no dependency checked out): "
    "the dependencies' licenses and nested submodules are then not known.",
)
@click.option(
    "--allow-drift",
    is_flag=True,
    help="Write the document even when qola verify fails, each difference recorded in it.",
)
@handle_errors
def sbom(
    common: Common, fmt: str, out: str | None, manifest_only: bool, allow_drift: bool
) -> None:
    """A bill of materials of the pins: the root, every dependency and nested submodule
    (commit, tag, URL without credentials, package URL, license where its tree declares
    one), the patches on top, as CycloneDX or SPDX JSON. Offline; the same tree gives
    the same bytes. Needs qola's sbom extra (the formats' own libraries)."""
    from qola.commands import sbom as making  # lazy: each command loads its own

    # "-" is stdout; a file of that name is ./- (as a str: Path("./-") would be "-").
    written = None if out in (None, "-") else Path(out)
    opts = making.SbomOptions(fmt, written, manifest_only, allow_drift)
    sys.exit(making.sbom(common, opts))


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
@allow_unsigned_option
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
    allow_unsigned: bool,
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
        allow_unsigned=allow_unsigned,
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
@allow_unsigned_option
@handle_errors
def freeze(common: Common, dry_run: bool, allow_unsigned: bool) -> None:
    """Rewrite pins (all, or NAMES) to the commits checked out now, in full."""
    from qola.commands.freeze import freeze as command  # lazy: each command loads its own

    sys.exit(command(common, dry_run, allow_unsigned))


@cli.command(epilog=EXIT_CODES)
@common_options()
@click.option("--end", is_flag=True, help="End it: the next checkout brings the pin back.")
@handle_errors
def develop(common: Common, end: bool) -> None:
    """Build against your own work in a dependency (NAMES), in this checkout alone.

    checkout and configure leave it as it is and say so on every run; verify fails on it.
    Without NAMES: list the dependencies being developed."""
    from qola.commands.develop import develop as command  # lazy: each command loads its own

    sys.exit(command(common, end))


@cli.command(epilog=EXIT_CODES)
@common_options(names=False)
@click.argument("name")
@click.argument("url")
@click.option("--tag", metavar="T", help="Pin the commit tag T names (annotated tags peeled).")
@click.option("--branch", metavar="B", help='Pin the tip of branch B, and follow it (track = "B").')
@click.option("--commit", "sha", metavar="SHA", help="Pin this commit (a full SHA, as it is).")
@click.option("--path", metavar="P", help="Where to check it out, below the root "
              "(default: 3rdparty/NAME beside the manifest).")  # fmt: skip
@click.option("--no-submodules", is_flag=True,
              help="Leave its nested submodules out (submodules = false).")  # fmt: skip
@click.option("--no-checkout", is_flag=True, help="Write the pin; do not check it out.")
@click.option("--allowed-signers", metavar="FILE", help="Check its pins' ssh signatures "
              "against FILE (git's allowed signers format).")  # fmt: skip
@click.option("--keyring", metavar="FILE", help="Check its pins' OpenPGP signatures "
              "against the public keys in FILE.")  # fmt: skip
@allow_unsigned_option
@lock_timeout_option
@fetch_timeout_option
@handle_errors
def add(
    common: Common,
    name: str,
    url: str,
    tag: str | None,
    branch: str | None,
    sha: str | None,
    path: str | None,
    no_submodules: bool,
    no_checkout: bool,
    allowed_signers: str | None,
    keyring: str | None,
    allow_unsigned: bool,
    lock_timeout: float,
    fetch_timeout: float,
) -> None:
    """Pin a new dependency NAME from URL: resolved with ls-remote (nothing cloned) to a
    full SHA and added to the manifest (a new qola.toml where there is none); its folder
    is added to the root's .gitignore, and it is checked out.

    Without --tag, --branch or --commit: the remote's default branch. Where the commit is
    exactly a tag, the tag is written beside it (tag = "T"). Nothing is written when
    anything is refused; a checkout that fails afterwards leaves the pin written."""
    from qola.commands import add as adding  # lazy: each command loads its own
    from qola.history.add import Wanted  # lazy: imported with the command it is for

    keys = tuple((key, file) for key, file in (("allowed-signers", allowed_signers),
                                               ("keyring", keyring)) if file is not None)
    opts = adding.AddOptions(Wanted(tag, branch, sha), path, not no_submodules, no_checkout,
                             fetch_timeout, keys, allow_unsigned, lock_timeout)  # fmt: skip
    sys.exit(adding.add(common, name, url, opts))


@cli.command(epilog=EXIT_CODES)
@common_options(names=False)
@click.argument("name")
@click.argument("url")
@click.argument("git_tag", metavar="[GIT_TAG]", required=False)
@click.option("--path", metavar="P", help="Where to check it out, below the root "
              "(default: 3rdparty/NAME beside the manifest).")  # fmt: skip
@click.option("--no-submodules", is_flag=True,
              help="Leave its nested submodules out (submodules = false).")  # fmt: skip
@click.option("--no-checkout", is_flag=True, help="Write the pin; do not check it out.")
@click.option("--check", is_flag=True, help="Write nothing: exit 2 when NAME is not pinned, "
              "saying how to pin it.")  # fmt: skip
@click.option("--cmake-out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the manifest's pins here for QoLAProvider.cmake (only when they "
              "change).")  # fmt: skip
@lock_timeout_option
@fetch_timeout_option
@handle_errors
def lock(
    common: Common,
    name: str,
    url: str,
    git_tag: str | None,
    path: str | None,
    no_submodules: bool,
    no_checkout: bool,
    check: bool,
    cmake_out: Path | None,
    lock_timeout: float,
    fetch_timeout: float,
) -> None:
    """Pin the FetchContent declaration NAME (GIT_REPOSITORY URL, GIT_TAG GIT_TAG) at the
    commit GIT_TAG names now, unless the manifest pins NAME already (its name matched
    without regard to case, as FetchContent matches names).

    GIT_TAG is read as git reads it after a clone: a tag (peeled; written beside the pin,
    tag = "T"), else a branch (followed: track = "B"), else a commit SHA. Without it,
    master, as FetchContent checks out. The table is the one `qola add` writes, in a new
    qola.toml where there is none. QoLAProvider.cmake runs it (--check, --cmake-out)."""
    from qola.commands import lock as locking  # lazy: each command loads its own

    opts = locking.LockOptions(git_tag, path, not no_submodules, no_checkout, check, cmake_out,
                               fetch_timeout, lock_timeout)  # fmt: skip
    sys.exit(locking.lock(common, name, url, opts))


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
    earlier = before_the_command(ctx, "manifest")
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
@click.option("--stat", is_flag=True,
              help="Add each moved pin's --stat summary (fetches the trees it needs).")
@fetch_timeout_option
@handle_errors
def diff(common: Common, rev: str, fmt: str, stat: bool, fetch_timeout: float) -> None:
    """The pins at REV (default: HEAD) against the work tree's, with the commits between.

    Each pin added, removed or moved; for a moved one the nested submodules it moves
    and the commits between old and new (subject, author, date), read from the
    dependency when it has them, else fetched without blobs into a temporary
    repository. A downgrade or a move to a commit that
    does not descend from the old pin is flagged. --stat adds git's summary of the
    files. Writes nothing; exit 3 when some history could not be fetched (the rest is
    printed).
    """
    from qola.commands.diff import diff as command  # lazy: each command loads its own

    sys.exit(command(common, rev, fmt, fetch_timeout, stat))


@cli.command(
    epilog=EXIT_CODES.replace(
        "the tree does not match the manifest", "a pin is further behind than --fail-if-behind"
    )
)
@common_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output format: text, json (versioned schema), markdown (a pull-request comment).",
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
    waited since it landed there (on the tip's first-parent line), and each nested
    submodule the tip would move. Fetches commits and the two commits' trees only
    (no file), into a temporary repository, back to the pin's date where it can;
    never touches the dependencies. -v lists the commits.
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
