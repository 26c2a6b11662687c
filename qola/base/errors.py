"""Errors that carry their exit code; cli.py is the one place that turns them into exits."""

from __future__ import annotations

from qola.base.hints import Hint, word

# The exit codes of every command, as --help (cli.EXIT_CODES) and README list them; a
# SIGTERM ends a run with 143 (128 + the signal: shim.Terminated).
EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_GIT = 3
EXIT_REFUSED = 4
EXIT_INSTALL = 5
EXIT_INTERRUPTED = 130


class QolaError(Exception):
    """An error a user can act on: `qola: <subject>: <problem>` and an optional hint."""

    exit_code = EXIT_USAGE

    def __init__(self, subject: str, problem: str, hint: str | Hint | None = None) -> None:
        super().__init__(f"{subject}: {problem}")
        self.subject = subject
        self.problem = problem
        self.hint = hint

    def render(self, *, cmake_build: str | None) -> str:
        """The user-facing text of the error; its hint in CMake's terms when cmake_build
        (the build folder of the configure that runs qola) is given."""
        text = f"qola: {self.subject}: {self.problem}"
        hint = word(self.hint, cmake_build)
        if hint:
            text += f"\nhint: {hint}"
        return text


class UsageError(QolaError):
    """Bad command line or environment value."""

    exit_code = EXIT_USAGE


class ManifestError(QolaError):
    """The manifest is malformed or invalid."""

    exit_code = EXIT_USAGE


class GitError(QolaError):
    """A git operation failed: network, unknown commit, a patch, the lock, a timeout."""

    exit_code = EXIT_GIT


class RefusedError(QolaError):
    """Going on would lose local work; nothing was changed."""

    exit_code = EXIT_REFUSED


class MismatchError(QolaError):
    """The tree does not match the manifest."""

    exit_code = EXIT_MISMATCH


class InstallError(QolaError):
    """The Python running qola lacks a package qola needs; nothing was changed."""

    exit_code = EXIT_INSTALL
