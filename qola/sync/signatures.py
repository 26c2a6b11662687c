"""Whether a pin carries a good signature by a key its manifest lists, read offline.

git itself checks it (`git verify-commit`, `git verify-tag`), with the keys given on its
command line: `gpg.ssh.allowedSignersFile` names the dependency's allowed signers file (an
empty one without), and GNUPGHOME a home of qola's into which its OpenPGP keyring was
imported (an empty one without). The programs are git's built-in ones, and every setting
that would change the verdict is given too: the `-c` settings of the command line come
after every config file and the environment's settings, so neither the repository's own
config (nor the user's) can name another program, other keys or a laxer trust level.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import safetext
from qola.gitrun import queries
from qola.gitrun.process import execute_program

if TYPE_CHECKING:
    from qola.gitrun.git import Output, Runner
    from qola.manifest import Dep

_IMPORT_SECONDS = 60.0
# What git 2.39 and OpenSSH 9.2's ssh-keygen -Y say (verify-commit --raw passes them on).
_SSH_GOOD = re.compile(r'Good "git" signature for (.+?) with (\S+) key (\S+)')
_SSH_KEY = re.compile(r'Good "git" signature with (\S+) key (\S+)')
_SSH_BEFORE = re.compile(r"key has expired: verify time \S+ > valid-before (\S+)")
_SSH_AFTER = re.compile(r"key is not yet valid: verify time \S+ < valid-after (\S+)")
_SSH_NAMESPACE = "key is not permitted for use in signature namespace"
# gpg's --status-fd lines (doc/DETAILS of GnuPG 2.2).
_STATUS = re.compile(r"^\[GNUPG:\] (\S+) ?(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Verdict:
    """What a check of one pin's signature found."""

    checked: str  # what carries the signature: "commit 1a2b3c4d5e6f", "tag v1.2"
    signer: str | None = None  # who signed it, when a listed key did (principal and key)
    problem: str | None = None  # why it is no good signature by a listed key

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def on(self) -> str:
        """What the signature checked is on: "tag" (the label's annotated tag) or "commit"."""
        return self.checked.partition(" ")[0]


def key_files(dep: Dep, root: Path) -> str:
    """The files that list who may sign dep's pins, as a message names them."""
    files = [f for f in (dep.allowed_signers, dep.keyring) if f is not None]
    return " or ".join(_shown(f, root) for f in files)


def _shown(file: str, root: Path) -> str:
    relative = os.path.relpath(file, root)
    return safetext.path(relative if not relative.startswith("..") else file)


class Keys:
    """The key settings of one command: each keyring imported once (into a GNUPGHOME of
    its own), every home removed at the end. Threads may share it."""

    def __init__(self) -> None:
        self._folder: str | None = None
        self._homes: dict[str | None, str] = {}
        self._failed: dict[str, str] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Keys:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
            self._homes.clear()

    def _root(self) -> str:
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="qola-keys-")
            Path(self._folder, "no-signers").write_bytes(b"")
        return self._folder

    def _home(self, keyring: str | None) -> tuple[str | None, str | None]:
        """(GNUPGHOME holding keyring's keys, or an empty one for None; why there is none)."""
        with self._lock:
            if keyring in self._homes:
                return self._homes[keyring], None
            if keyring is not None and keyring in self._failed:
                return None, self._failed[keyring]
            home = tempfile.mkdtemp(prefix="gnupg-", dir=self._root())
            # Nothing is started that outlives the check: no agent (verifying needs
            # none), no keyboxd (GnuPG 2.4 makes a new home use one unless common.conf says).
            Path(home, "gpg.conf").write_text("no-autostart\n", encoding="utf-8")
            Path(home, "common.conf").write_text("", encoding="utf-8")
            if keyring is not None:
                problem = _import(home, keyring)
                if problem is not None:
                    self._failed[keyring] = problem
                    return None, problem
            self._homes[keyring] = home
            return home, None

    def settings(self, dep: Dep) -> tuple[list[str], dict[str, str], str | None]:
        """(-c settings, environment, why the keyring cannot be used) of a check of dep."""
        home, problem = self._home(dep.keyring)
        signers = dep.allowed_signers or os.path.join(self._root(), "no-signers")
        pairs = {
            "gpg.program": "gpg",
            "gpg.openpgp.program": "gpg",
            "gpg.x509.program": "gpgsm",
            "gpg.ssh.program": "ssh-keygen",
            "gpg.ssh.allowedSignersFile": signers,
            "gpg.ssh.revocationFile": os.path.join(self._root(), "no-signers"),
            "gpg.minTrustLevel": "undefined",
        }
        args = [arg for key, value in pairs.items() for arg in ("-c", f"{key}={value}")]
        return args, {"GNUPGHOME": home or os.path.join(self._root(), "none")}, problem


def _import(home: str, keyring: str) -> str | None:
    """Import keyring's public keys into home; why not, when gpg could not."""
    command = ["gpg", "--batch", "--no-autostart", "--homedir", home, "--import", keyring]
    env = {k: v for k, v in os.environ.items() if k != "GNUPGHOME"}
    try:
        status, _, stderr = execute_program(command, env, _IMPORT_SECONDS)
    except FileNotFoundError:
        return "gpg is not installed, and the OpenPGP keyring needs it (install GnuPG)"
    if status is None:
        return f"gpg did not import {keyring} within {_IMPORT_SECONDS:g} s"
    if status != 0 or ("imported:" not in stderr and "unchanged:" not in stderr):
        return f"gpg imports no public key from it: {_import_said(stderr, home, status)}"
    return None


def _import_said(stderr: str, home: str, status: int) -> str:
    """What gpg said of an import that failed, without the lines of qola's own home (its
    keybox made, a random path) or the count of keys it processed (none)."""
    lines = [line.strip().removeprefix("gpg: ") for line in stderr.splitlines()]
    kept = [line for line in lines if line and home not in line
            and not line.startswith("Total number processed")]  # fmt: skip
    said = " ".join(" ".join(kept).split())[:300]
    return safetext.line(said or f"gpg ended with exit code {status}")


def check(runner: Runner, keys: Keys, dep: Dep, repo: Path, root: Path, commit: str | None = None,
          tag: str | None = None, tag_ref: str | None = None) -> Verdict:  # fmt: skip
    """Whether commit (default: the pin) carries a good signature by a key dep's files list,
    or the annotated tag tag does, when repo holds it and it names the commit: a signed
    tag vouches for the commit it names. tag defaults to the pin's label; tag_ref: where
    repo holds it (default refs/tags/<tag>)."""
    commit = commit or dep.commit
    tag = tag if tag is not None else (dep.tag if commit == dep.commit else None)  # "": none
    files = key_files(dep, root)
    args, env, problem = keys.settings(dep)
    if problem is not None:
        return Verdict(f"commit {commit[:12]}", problem=f"{_shown(dep.keyring or '', root)}: "
                       f"{problem}")  # fmt: skip
    note = ""
    if tag:
        ref = tag_ref or f"refs/tags/{tag}"
        kind = _object_type(runner, repo, ref)
        if kind == "tag" and queries.commit_sha(runner, repo, ref) == commit:
            out = runner.run(repo, *args, "verify-tag", "--raw", "--end-of-options", ref,
                             check=False, env=env, subject=dep.name)  # fmt: skip
            return _verdict(out, f"tag {tag}", files)
        if kind is None:
            note = f" (its label, tag {tag}, is not in the clone: checked out by SHA, without tags)"
        elif kind != "tag":
            note = f" (its label, tag {tag}, is a lightweight tag: no signature is on it)"
    if not queries.has_commit(runner, repo, commit):
        return Verdict(f"commit {commit[:12]}", problem=f"commit {commit[:12]} is not in the "
                       "clone: its signature cannot be checked")  # fmt: skip
    out = runner.run(repo, *args, "verify-commit", "--raw", "--end-of-options", commit,
                     check=False, env=env, subject=dep.name)  # fmt: skip
    verdict = _verdict(out, f"commit {commit[:12]}", files)
    if verdict.problem is not None and note:
        return Verdict(verdict.checked, problem=verdict.problem + note)
    return verdict


def _object_type(runner: Runner, repo: Path, ref: str) -> str | None:
    out = runner.run(repo, "cat-file", "-t", "--end-of-options", ref, check=False)
    return out.stdout.strip() if out.status == 0 and out.stdout.strip() else None


def _verdict(out: Output, checked: str, files: str) -> Verdict:
    """What git's verify-commit or verify-tag --raw said, in words."""
    said = out.stderr + out.stdout
    statuses = {name: rest for name, rest in _STATUS.findall(said)}
    if out.status == 0:
        good = _SSH_GOOD.search(said)
        if good:
            return Verdict(checked, f"{good.group(1)} (ssh key {good.group(3)})")
        fingerprint = statuses.get("VALIDSIG", "").split()
        user = statuses.get("GOODSIG", "").partition(" ")[2]
        key = fingerprint[-1] if fingerprint else "?"
        signer = f"{safetext.line(user)} (OpenPGP key {key})" if user else f"OpenPGP key {key}"
        return Verdict(checked, signer)
    return Verdict(checked, problem=f"{checked} {_why(said, statuses, files)}")


def _why(said: str, statuses: dict[str, str], files: str) -> str:
    if _SSH_NAMESPACE in said:  # ssh-keygen's word for a key listed with namespaces="..."
        return (f"is signed by an ssh key that {files} allows only in other namespaces: "
                'its namespaces= option leaves out "git", the one git signs in')  # fmt: skip
    if "BADSIG" in statuses or "incorrect signature" in said or "Could not verify" in said:
        return "has a bad signature: what is signed is not what the signature was made for"
    if "EXPKEYSIG" in statuses:
        return (f"is signed by the OpenPGP key {_key(statuses, 'EXPKEYSIG')}, which had "
                f"expired ({files})")  # fmt: skip
    if "EXPSIG" in statuses:
        return f"carries a signature that has expired (OpenPGP key {_key(statuses, 'EXPSIG')})"
    if "REVKEYSIG" in statuses:
        return f"is signed by the OpenPGP key {_key(statuses, 'REVKEYSIG')}, which is revoked"
    before, after = _SSH_BEFORE.search(said), _SSH_AFTER.search(said)
    key = _SSH_KEY.search(said)
    shown = key.group(2) if key else "?"
    if before:
        return (f"is signed by the ssh key {shown}, which {files} lists as valid only "
                f"before {before.group(1)}: expired when it was signed")  # fmt: skip
    if after:
        return (f"is signed by the ssh key {shown}, which {files} lists as valid only "
                f"after {after.group(1)}")  # fmt: skip
    if key or "No principal matched" in said:
        return f"is signed by the ssh key {shown}, which {files} does not list"
    if "NO_PUBKEY" in statuses or "ERRSIG" in statuses:
        found = (statuses.get("ERRSIG") or statuses.get("NO_PUBKEY", "")).split()
        fingerprint = found[-1] if found else "?"
        return f"is signed by the OpenPGP key {fingerprint}, which {files} does not hold"
    if not said.strip() or "no signature found" in said:
        return f"is not signed; {files} lists who may sign it"
    lines = [line for line in said.strip().splitlines() if not line.startswith("[GNUPG:]")]
    last = safetext.line(lines[-1]) if lines else "git verify said no more"
    return f"carries no good signature by a key {files} lists: {last}"


def _key(statuses: dict[str, str], name: str) -> str:
    valid = statuses.get("VALIDSIG", "").split()
    return valid[-1] if valid else (statuses.get(name, "").split() or ["?"])[0]
