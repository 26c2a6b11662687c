"""click's side of the command line: the option table's click options, the common options
(accepted before or after the command's name), shell completion, and the one handler that
turns errors into exits.

cli.py declares the commands with these; together they are the only modules that import
click."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource
from click.shell_completion import CompletionItem

from qola.base import console
from qola.base.errors import EXIT_GIT, EXIT_INTERRUPTED, EXIT_USAGE, QolaError
from qola.commands import options
from qola.commands.options import Spec
from qola.commands.session import Common
from qola.output import cmake_env

if TYPE_CHECKING:
    from qola.manifest import Manifest

EXIT_CODES = """\b
Exit codes:
  0    success; the tree matches the manifest
  1    the tree does not match the manifest
  2    bad command line or invalid manifest
  3    a git operation failed (network, unknown commit, patch, lock, timeout)
  4    refused: local work would be lost, or a folder is not a repository
       git accepts; nothing was changed
  5    the Python running qola lacks a package qola needs (click, GitPython,
       tomli-w; tomli before 3.11); nothing was changed
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


def before_the_command(ctx: click.Context, name: str) -> Any:
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
        earlier = before_the_command(ctx, spec.dest)
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
        return ctx.params.get(name) or before_the_command(ctx, name)

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
allow_unsigned_option = click.option(
    "--allow-unsigned",
    is_flag=True,
    help=("Pin a commit no key of its allowed-signers or keyring signed (a warning says so; "
          "`bump --commit` records it in its commit message)."),
)
