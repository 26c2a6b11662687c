"""What to give git so that a repository's own config runs nothing: the settings, the
transports, and the settings that cannot be overridden (refused instead).

Pure functions of config entries, as git listed them (qola/gitrun/config_listing.py): the
repository's own (local and worktree scope, with every include) and the user's own
(system, global, the environment). Checked against git 2.39.5's source and
git-config(1).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qola.base import safetext
from qola.base.errors import GitError
from qola.repo.configfile import Entry

# Settings whose value is a command (or a program git runs), by (section, key), with the
# value that disables each when the user has none of their own. A section listed with a
# subsection (<driver>, <tool>, <identity> ...) only takes effect with one; "*" below
# means with or without.
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
    ("merge", "driver"): "",  # ll-merge.c: the empty command line fails to start
    # Programs of commands qola never runs; overridden all the same, as they cost nothing:
    # an empty command runs nothing, an empty path makes git look for the tool by name.
    ("difftool", "cmd"): "",
    ("difftool", "path"): "",
    ("mergetool", "cmd"): "",
    ("mergetool", "path"): "",
    ("man", "cmd"): "",
    ("man", "path"): "",
    ("browser", "cmd"): "",
    ("browser", "path"): "",
    ("guitool", "cmd"): "",
    # git interpret-trailers (git-interpret-trailers(1)): a trailer's value from a command;
    # git archive (git-archive(1)): a format's compressor. Empty: fails to start.
    ("trailer", "cmd"): "",
    ("trailer", "command"): "",
    ("tar", "command"): "",
    # git send-email: programs that give addresses, headers, or send (a path as server).
    ("sendemail", "tocmd"): "",
    ("sendemail", "cccmd"): "",
    ("sendemail", "headercmd"): "",
    ("sendemail", "sendmailcmd"): "",
    ("sendemail", "smtpserver"): "",
    # http.<url>.*: curl would write its cookie jar to, and send cookies from, a file the
    # repository names: not a command, but a write out of the project.
    ("http", "savecookies"): "false",
    ("http", "cookiefile"): "",
}
# Settings without a subsection.
_NEUTRAL_PLAIN = {
    ("diff", "external"): "",
    ("core", "pager"): "cat",  # pager.c: "cat" (or "") means no pager
    ("core", "editor"): ":",  # editor.c: ":" is never run
    ("sequence", "editor"): ":",
    ("core", "alternaterefscommand"): "",  # object-file.c: fails to start, no refs read
    ("interactive", "difffilter"): "",
    ("gpg", "program"): "gpg",  # gpg-interface.c: the built-in programs
    ("imap", "tunnel"): "",  # imap-send: an empty tunnel command runs nothing
    ("instaweb", "httpd"): "",
    ("instaweb", "browser"): "",
    ("web", "browser"): "",
    ("help", "browser"): "",
    ("man", "viewer"): "",
    ("http", "savecookies"): "false",
    ("http", "cookiefile"): "",
    ("sendemail", "tocmd"): "",
    ("sendemail", "cccmd"): "",
    ("sendemail", "headercmd"): "",
    ("sendemail", "sendmailcmd"): "",
    ("sendemail", "smtpserver"): "",
}
_GPG_FORMATS = {"openpgp.program": "gpg", "x509.program": "gpgsm", "ssh.program": "ssh-keygen",
                # split into one empty word: fails to start
                "ssh.defaultkeycommand": '""'}  # fmt: skip
# git-lfs (run by the user's filter.lfs, as its Debian package and its docs set it up) runs
# the commands its own keys name, read from the same config git reads: git-lfs-config(5)
# of git-lfs 3.3. By (first word of the subsection, key); the subsection's second word is
# the agent's or extension's name. An empty path or command fails to start: nothing runs.
_LFS = {
    ("customtransfer", "path"): "",  # a custom transfer agent: run for every transfer
    ("customtransfer", "args"): "",
    ("extension", "clean"): "",  # an extension's programs: run on every clean and smudge
    ("extension", "smudge"): "",
}
# lfs.standalonetransferagent names the agent to use for every transfer: none.
_LFS_PLAIN = {"standalonetransferagent": ""}
_HELPER = ("credential", "helper")
# Transports every git of qola's may use: what a URL in a manifest may name.
BASE_TRANSPORTS = ("https", "http", "ssh", "git", "file")
# Defaults of protocol.<name>.allow (transport.c get_protocol_config); others: "user".
_PROTOCOL_DEFAULTS = {"http": "always", "https": "always", "git": "always", "ssh": "always",
                      "ext": "never"}  # fmt: skip
_HELPER_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)::")
_SCHEME_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_DEFAULT_PACKS = ("", "git-upload-pack", "git-receive-pack")


class UnsafeRepositoryError(GitError):
    """git would run a repository's own command, or write outside the project, in a
    repository as it is: qola runs no git there."""


class UnsafeConfigError(UnsafeRepositoryError):
    """A repository's own config names a command qola cannot override: nothing is run."""


@dataclass(frozen=True)
class Role:
    """What a git command may do in a repository, which decides what is refused there."""

    here: bool  # git runs in this repository (not only, maybe, in one nested in it)
    fetches: bool = False  # the command talks to a remote (fetch, clone, ls-remote ...)
    pushes: bool = False
    online: bool = True  # transports are allowed: a partial clone may fetch lazily
    anything: bool = False  # a command of the user's (qola exec): it may do all of it


def settings(local: Iterable[Entry], user: Sequence[Entry]) -> tuple[list[tuple[str, str]],
                                                                       dict[str, str]]:  # fmt: skip
    """(key, value) settings overriding every command setting in local, and variables for
    the environment (what no setting can override)."""
    pairs: dict[str, str] = {}
    extra: dict[str, str] = {}
    reset_helpers = False
    for entry in local:
        section, key = entry.section, entry.key
        if (section, key) == _HELPER:
            reset_helpers = True
        elif section == "alias":
            # Aliases cannot replace git's commands, but git falls back to one for a
            # command it cannot find (`git remote-<helper>`): an empty one runs nothing.
            pairs[entry.name] = _users(user, entry) or ""
        elif section == "pager" and entry.subsection is None:
            pairs[entry.name] = _users(user, entry) or "false"  # pager.<command>: no pager
        elif section == "submodule" and key == "update" and entry.text.startswith("!"):
            pairs[entry.name] = _users(user, entry) or "checkout"
        elif (section, key, entry.subsection) == ("core", "sshcommand", None):
            # GIT_SSH_COMMAND, when set, wins over any config anyway.
            ssh = os.environ.get("GIT_SSH")
            program = _users(user, entry) or (shlex.quote(ssh) if ssh else "ssh")
            pairs[entry.name] = os.environ.get("GIT_SSH_COMMAND") or program
        elif (section, key, entry.subsection) == ("core", "askpass", None):
            # GIT_ASKPASS, when set, wins; else git falls back on SSH_ASKPASS.
            program = _users(user, entry) or os.environ.get("SSH_ASKPASS", "")
            pairs[entry.name] = os.environ.get("GIT_ASKPASS") or program
        elif (section, key) == ("core", "gitproxy"):
            # git takes the first value that matches the host, and local config comes
            # before the command line: the environment variable, read first, wins.
            extra.setdefault("GIT_PROXY_COMMAND", os.environ.get("GIT_PROXY_COMMAND", ""))
        else:
            neutral = _neutral(entry)
            if neutral is not None:
                mine = _users(user, entry)
                pairs[entry.name] = mine if mine is not None else neutral
    found = list(pairs.items())
    if reset_helpers:
        # An empty helper empties the list so far (credential.c); then the user's own
        # helpers, in their order and with their URL patterns, go back on.
        helpers = [(e.name, e.text) for e in user if (e.section, e.key) == _HELPER]
        found = [("credential.helper", ""), *helpers, *found]
    return found, extra


def _neutral(entry: Entry) -> str | None:
    """The disabling value of a command setting; None for any other setting."""
    section, sub, key = entry.section, entry.subsection, entry.key
    if section == "lfs":
        if sub is None:
            return _LFS_PLAIN.get(key)
        return _LFS.get((sub.partition(".")[0].lower(), key))
    if sub is None:
        return _NEUTRAL_PLAIN.get((section, key))
    if section == "pager":
        return None  # pager.<command>.<key> is no setting of git's
    if section == "gpg":
        return _GPG_FORMATS.get(f"{sub.lower()}.{key}")
    return _NEUTRAL.get((section, key))


def _users(user: Sequence[Entry], entry: Entry) -> str | None:
    found = None
    for mine in user:
        if (mine.section, mine.subsection, mine.key) == (entry.section, entry.subsection,
                                                          entry.key):  # fmt: skip
            found = mine.text
    return found


def transport_of(url: str) -> str:
    """The protocol name git checks protocol.<name>.allow for, for a URL."""
    helper = _HELPER_URL.match(url)
    if helper:
        return helper.group(1)
    scheme = _SCHEME_URL.match(url)
    if scheme:
        return scheme.group(1)
    colon, slash = url.find(":"), url.find("/")
    return "ssh" if colon > 0 and (slash < 0 or colon < slash) else "file"


def allowed_transports(user: Sequence[Entry]) -> list[str]:
    """The transports a user would expect: those a manifest URL may name, those the user's
    own url.<base>.insteadOf mirrors lead to, and those the user's config names."""
    found = dict.fromkeys(BASE_TRANSPORTS)
    for entry in user:
        if entry.section == "url" and entry.subsection is not None and entry.key in (
            "insteadof", "pushinsteadof"
        ):  # fmt: skip
            found[transport_of(entry.subsection)] = None
        if entry.section == "protocol" and entry.key == "allow" and entry.subsection:
            found[entry.subsection] = None
    return list(found)


def transports(
    local: Iterable[Entry], user: Sequence[Entry], online: bool
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Settings and variables that let git use only the allowed transports (online), or
    none at all and no lazy fetch (offline): never a remote helper, `ext::` or `fd::` that
    a repository's config (its insteadOf, its remote.<name>.vcs or url) introduces."""
    allowed = allowed_transports(user)
    named = [e.subsection for e in local if e.section == "protocol" and e.key == "allow"]
    pairs = [("protocol.allow", "never")]
    for name in allowed:
        pairs.append((f"protocol.{name}.allow", _user_protocol(user, name) if online else "never"))
    for name in dict.fromkeys(n for n in named if n and n not in allowed):
        pairs.append((f"protocol.{name}.allow", "never"))
    if online:
        return pairs, {}
    # No transport at all, whatever any config says (GIT_ALLOW_PROTOCOL wins over every
    # protocol setting, transport.c), so a partial clone fetches nothing lazily; git 2.45
    # and later skip the attempt itself.
    return pairs, {"GIT_ALLOW_PROTOCOL": "", "GIT_NO_LAZY_FETCH": "1"}


def _user_protocol(user: Sequence[Entry], name: str) -> str:
    """protocol.<name>.allow as the user's own config (alone) would have it."""
    own = general = None
    for entry in user:
        if entry.section == "protocol" and entry.key == "allow":
            if entry.subsection == name:
                own = entry.text
            elif entry.subsection is None:
                general = entry.text
    return own or general or _PROTOCOL_DEFAULTS.get(name, "user")


def refusal(local: Sequence[Entry], gitdir: str, top: str, cwd: str, role: Role) -> None:
    """Raise UnsafeConfigError for a setting git would act on in this role that no command
    line can override: remote.<name>.uploadpack (git takes the first value it reads, and a
    repository's config comes before the command line) when git fetches here, or a
    partial clone may fetch lazily; receivepack when it pushes; a core.worktree leading
    out of top, where a checkout would write."""
    lazy = role.online and any(
        (e.section, e.subsection, e.key) == ("extensions", None, "partialclone")
        or (e.section == "remote" and e.key == "promisor" and e.text.lower() in _TRUE)
        for e in local
    )
    for entry in local:
        if entry.section != "remote" and entry.section != "core":
            continue
        if entry.section == "remote" and entry.subsection is not None:
            uses = {"uploadpack": role.anything or (role.here and role.fetches) or lazy,
                    "receivepack": role.anything or (role.here and role.pushes)}  # fmt: skip
            if uses.get(entry.key) and entry.text.strip() not in _DEFAULT_PACKS:
                raise _unoverridable(cwd, entry, "fetches" if entry.key == "uploadpack"
                                     else "pushes")  # fmt: skip
        if (entry.section, entry.subsection, entry.key) == ("core", None, "worktree") and (
            role.here or role.anything
        ):
            _check_work_tree(cwd, entry, gitdir, top)


_TRUE = ("true", "yes", "on", "1", "")


def _unoverridable(cwd: str, entry: Entry, when: str) -> UnsafeConfigError:
    return UnsafeConfigError(
        cwd,
        f"{entry.origin} sets {entry.name} = {entry.text!r}, a command git would run when "
        f"it {when}; qola runs no command from a repository's own config, and git lets no "
        "command line override this one",
        f"if you trust it, remove it ({unset_command(entry)}) and run again",
    )


def config_command(entry: Entry, *args: str) -> str:
    """`git config --file <entry's file> ARGS` as a user may paste it (ARGS quoted too)."""
    words = ["git", "config", "--file", entry.origin, *args]
    return " ".join(safetext.shell_word(word) for word in words)


def unset_command(entry: Entry) -> str:
    """The command that removes entry's key (every value of it) from the file it is in."""
    return config_command(entry, "--unset-all", entry.name)


def _check_work_tree(cwd: str, entry: Entry, gitdir: str, top: str) -> None:
    where = os.path.realpath(os.path.join(gitdir, entry.text))
    inside = os.path.commonpath([top, where]) == top
    if not inside or ".git" in Path(os.path.relpath(where, top)).parts:
        raise UnsafeConfigError(
            cwd,
            f"{entry.origin} sets core.worktree = {entry.text!r}, which leads to {where}, "
            f"out of {top}; git would write the files of a checkout there",
            f"if that is not meant, remove it ({unset_command(entry)}) and run again",
        )


def environment(settings_: Sequence[tuple[str, str]], base: int) -> dict[str, str]:
    """GIT_CONFIG_COUNT/KEY_n/VALUE_n for settings, after the base the environment has."""
    if not settings_:
        return {}
    result = {"GIT_CONFIG_COUNT": str(base + len(settings_))}
    for i, (key, value) in enumerate(settings_, base):
        result[f"GIT_CONFIG_KEY_{i}"] = key
        result[f"GIT_CONFIG_VALUE_{i}"] = value
    return result
