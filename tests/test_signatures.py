"""Signatures on pins: a dependency with `allowed-signers` (ssh) or `keyring` (OpenPGP)
passes `verify` only when its pinned commit, or the annotated tag of its label, carries a
good signature by a listed key (kind `signature` otherwise); `bump`, `add` and `freeze`
refuse to pin anything else (exit 4) unless --allow-unsigned, which a warning states and
`bump --commit`'s message records.

Every key is made here: ssh-keygen, and gpg in a GNUPGHOME of the test's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from repos import commit_file, git, init_repo, snapshot

pytestmark = pytest.mark.skipif(
    not (shutil.which("gpg") and shutil.which("ssh-keygen")), reason="needs gpg and ssh-keygen"
)


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})  # fmt: skip
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout.strip()


@dataclass(frozen=True)
class Keys:
    folder: Path
    ssh: Path  # the listed ssh key (private; .pub beside it)
    ssh_other: Path  # an ssh key no file lists
    gpg_home: Path  # the listed OpenPGP key's home
    gpg_other_home: Path  # a key no keyring holds
    gpg_expired_home: Path  # a key that expired on 2020-01-02
    fingerprint: str  # the listed OpenPGP key's
    ssh_fingerprint: str
    other_fingerprint: str
    expired_fingerprint: str

    def signers(self, line_options: str = "") -> str:
        """An allowed signers file listing the listed ssh key as dev@example.com."""
        public = self.ssh.with_suffix(".pub").read_text().strip()
        return f"dev@example.com {line_options}{public}\n".replace("  ", " ")


@dataclass(frozen=True)
class Lib:
    """A served library: commits signed each way, and tags."""

    served: Path
    ssh_signed: str
    gpg_signed: str
    unsigned: str  # the annotated tag v1 (signed by the listed ssh key) names it
    other_signed: str  # signed by an ssh key no file lists
    gpg_other: str
    gpg_expired: str
    bad: str  # a copy of ssh_signed with its message changed: the signature no longer fits
    untagged: str  # unsigned, and no tag names it
    tip: str  # main's tip: signed by the listed ssh key


def _gpg_key(home: Path, user: str, *extra: str, expiry: str = "0") -> str:
    home.mkdir(mode=0o700)
    run(home, "gpg", "--homedir", str(home), "--batch", "--passphrase", "", *extra,
        "--quick-gen-key", user, "ed25519", "sign", expiry)  # fmt: skip
    listing = run(home, "gpg", "--homedir", str(home), "--with-colons", "--list-keys")
    return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr"))


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("keys")
    for name in ("listed", "other"):
        run(folder, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
            str(folder / name))  # fmt: skip
    fingerprint = _gpg_key(folder / "gpg", "Dev <dev@example.com>")
    other = _gpg_key(folder / "gpg-other", "Other <other@example.com>")
    expired = _gpg_key(folder / "gpg-expired", "Old <old@example.com>",
             "--faked-system-time", "20200101T000000!", expiry="1d")  # fmt: skip
    ssh_fp = run(folder, "ssh-keygen", "-l", "-f", str(folder / "listed.pub")).split()[1]
    found = Keys(folder, folder / "listed", folder / "other", folder / "gpg",
                 folder / "gpg-other", folder / "gpg-expired", fingerprint, ssh_fp, other,
                 expired)  # fmt: skip
    yield found
    for home in (found.gpg_home, found.gpg_other_home, found.gpg_expired_home):
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False)


def ssh_sign(key: Path) -> tuple[str, ...]:
    return ("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}")


def signed_commit(repo: Path, name: str, text: str, *how: str,
                  env: dict[str, str] | None = None) -> str:  # fmt: skip
    (repo / name).write_text(text)
    run(repo, "git", "add", "--", name)
    run(repo, "git", *how, "commit", "-q", "-S", "-m", f"update {name}", env=env)
    return git(repo, "rev-parse", "HEAD")


def gpg_sign(home: Path, key: str) -> tuple[tuple[str, ...], dict[str, str]]:
    how = ("-c", "gpg.format=openpgp", "-c", "gpg.program=gpg", "-c", f"user.signingkey={key}")
    return how, {"GNUPGHOME": str(home)}


@pytest.fixture(scope="module")
def lib_template(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> Lib:
    base = tmp_path_factory.mktemp("signed-lib")
    repo = init_repo(base / "lib")
    unsigned = commit_file(repo, "v.txt", "unsigned\n")
    run(repo, "git", *ssh_sign(keys.ssh), "tag", "-s", "-m", "release 1", "v1")
    git(repo, "tag", "-a", "-m", "plain", "plain", unsigned)
    ssh_signed = signed_commit(repo, "v.txt", "ssh\n", *ssh_sign(keys.ssh))
    how, env = gpg_sign(keys.gpg_home, keys.fingerprint)
    gpg_signed = signed_commit(repo, "v.txt", "gpg\n", *how, env=env)
    other = signed_commit(repo, "v.txt", "other\n", *ssh_sign(keys.ssh_other))
    how, env = gpg_sign(keys.gpg_other_home, keys.other_fingerprint)
    gpg_other = signed_commit(repo, "v.txt", "gpg other\n", *how, env=env)
    # Signed on 2020-01-01 with a key that expired the day after (gpg's clock faked).
    wrapper = base / "gpg-2020"
    wrapper.write_text('#!/bin/sh\nexec gpg --faked-system-time 20200101T120000! "$@"\n')
    wrapper.chmod(0o755)
    expired = signed_commit(repo, "v.txt", "expired\n", "-c", f"gpg.program={wrapper}", "-c",
                            f"user.signingkey={keys.expired_fingerprint}",
                            env={"GNUPGHOME": str(keys.gpg_expired_home)})  # fmt: skip
    untagged = commit_file(repo, "v.txt", "untagged\n")
    tip = signed_commit(repo, "v.txt", "tip\n", *ssh_sign(keys.ssh))
    # ssh_signed's object with one byte of its message changed, the signature kept.
    body = subprocess.run(["git", "cat-file", "commit", ssh_signed], cwd=repo,
                          capture_output=True, check=True).stdout  # fmt: skip
    tampered = body.replace(b"update v.txt", b"update v.txT")
    bad = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo,
                         input=tampered, capture_output=True, check=True).stdout.decode().strip()
    git(repo, "branch", "bad", bad)
    served = base / "lib.git"
    git(base, "clone", "-q", "--bare", str(repo), str(served))
    return Lib(served, ssh_signed, gpg_signed, unsigned, other, gpg_other, expired, bad,
               untagged, tip)


@pytest.fixture
def lib(tmp_path: Path, lib_template: Lib) -> Lib:
    served = tmp_path / "lib.git"
    git(tmp_path, "clone", "-q", "--bare", "--mirror", str(lib_template.served), str(served))
    return Lib(served, *list(lib_template.__dict__.values())[1:])


def project(tmp_path: Path, lib: Lib, pin: str, keys: Keys, key_line: str,
            signers: str | None = None, label: str | None = None) -> Path:  # fmt: skip
    root = init_repo(tmp_path / "project")
    (root / "keys").mkdir()
    (root / "keys" / "signers").write_text(signers if signers is not None else keys.signers())
    exported = run(root, "gpg", "--homedir", str(keys.gpg_home), "--armor", "--export")
    (root / "keys" / "dev.asc").write_text(exported + "\n")
    (root / "qola.toml").write_text(
        "[deps.lib]\n"
        'path = "3rdparty/lib"\n'
        f'url = "{lib.served}"\n'
        f'commit = "{pin}"\n'
        'track = "main"\n'
        + (f'tag = "{label}"\n' if label else "")
        + key_line
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    return root


SSH = 'allowed-signers = "keys/signers"\n'
GPG = 'keyring = "keys/dev.asc"\n'


def checked_out(tmp_path: Path, lib: Lib, pin: str, keys: Keys, key_line: str, run_qola,
                **kwargs: str) -> Path:  # fmt: skip
    root = project(tmp_path, lib, pin, keys, key_line, **kwargs)
    res = run_qola("checkout", "-q", cwd=root)
    assert res.exit_code == 0, res.stderr
    return root


def verify_json(run_qola, root: Path) -> tuple[int, dict]:
    res = run_qola("verify", "--format", "json", cwd=root)
    return res.exit_code, json.loads(res.stdout)


def signature_problems(document: dict) -> list[str]:
    return [p["message"] for d in document["deps"] for p in d["problems"]
            if p["kind"] == "signature"]  # fmt: skip


def test_verify_an_ssh_signed_pin_by_a_listed_key_passes(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_verify_a_gpg_signed_pin_by_a_listed_key_passes(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.gpg_signed, keys, GPG, run_qola)
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_verify_an_unsigned_pin_fails_and_changes_nothing(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola)
    before = snapshot(root)
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.unsigned[:12]} is not signed; keys/signers lists who may sign it"
    ]
    assert snapshot(root) == before


def test_verify_a_pin_signed_by_an_unlisted_ssh_key_fails(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.other_signed, keys, SSH, run_qola)
    code, document = verify_json(run_qola, root)
    other = run(tmp_path, "ssh-keygen", "-l", "-f", str(keys.ssh_other) + ".pub").split()[1]
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.other_signed[:12]} is signed by the ssh key {other}, which keys/signers "
        "does not list"
    ]


def test_verify_a_pin_signed_by_an_unlisted_gpg_key_fails(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.gpg_other, keys, GPG, run_qola)
    code, document = verify_json(run_qola, root)
    [message] = signature_problems(document)
    assert code == 1
    assert message.startswith(f"commit {lib.gpg_other[:12]} is signed by the OpenPGP key ")
    assert message.endswith(", which keys/dev.asc does not hold")


def test_verify_an_ssh_key_past_its_valid_before_fails_as_expired(
    tmp_path, lib, keys, run_qola
) -> None:
    signers = keys.signers('valid-before="20200101" ')
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola, signers=signers)
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.ssh_signed[:12]} is signed by the ssh key {keys.ssh_fingerprint}, which "
        "keys/signers lists as valid only before 2020-01-01T00:00:00: expired when it was "
        "signed"
    ]


def test_verify_a_gpg_key_expired_fails_as_expired(tmp_path, lib, keys, run_qola) -> None:
    root = project(tmp_path, lib, lib.gpg_expired, keys, GPG)
    exported = run(root, "gpg", "--homedir", str(keys.gpg_expired_home), "--armor", "--export")
    (root / "keys" / "dev.asc").write_text(exported + "\n")
    assert run_qola("checkout", "-q", cwd=root).exit_code == 0
    code, document = verify_json(run_qola, root)
    [message] = signature_problems(document)
    assert code == 1
    assert message.startswith(f"commit {lib.gpg_expired[:12]} is signed by the OpenPGP key ")
    assert message.endswith(", which had expired (keys/dev.asc)")


def test_verify_a_tampered_commit_has_a_bad_signature(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.bad, keys, SSH, run_qola)
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.bad[:12]} has a bad signature: what is signed is not what the signature "
        "was made for"
    ]


def test_a_verdict_says_whether_the_tag_or_the_commit_was_checked() -> None:
    from qola.sync.signatures import Verdict

    assert Verdict("tag v1", "dev@example.com (ssh key SHA256:x)").on == "tag"
    assert Verdict("commit 1a2b3c4d5e6f", problem="is not signed").on == "commit"


def test_verify_a_key_listed_for_other_namespaces_says_so(tmp_path, lib, keys, run_qola) -> None:
    signers = keys.signers('namespaces="file" ')
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola, signers=signers)
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.ssh_signed[:12]} is signed by an ssh key that keys/signers allows only "
        'in other namespaces: its namespaces= option leaves out "git", the one git signs in'
    ]


def test_verify_a_keyring_of_no_keys_says_so_without_temporary_paths(
    tmp_path, lib, keys, run_qola
) -> None:
    root = project(tmp_path, lib, lib.gpg_signed, keys, GPG)
    (root / "keys" / "dev.asc").write_text("not a key\n")
    assert run_qola("checkout", "-q", cwd=root).exit_code == 0
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        "keys/dev.asc: gpg imports no public key from it: no valid OpenPGP data found."
    ]


def test_verify_a_signed_label_tag_vouches_for_an_unsigned_commit(
    tmp_path, lib, keys, run_qola
) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_verify_a_label_tag_resigned_by_an_unknown_key_fails(
    tmp_path, lib, keys, run_qola
) -> None:
    # Upstream's v1 made again, on the same commit, signed by a key the file does not list.
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(lib.served), str(work))
    run(work, "git", *ssh_sign(keys.ssh_other), "tag", "-f", "-s", "-m", "release 1", "v1",
        lib.unsigned)  # fmt: skip
    git(work, "push", "-q", "-f", "origin", "refs/tags/v1")
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    other = run(tmp_path, "ssh-keygen", "-l", "-f", str(keys.ssh_other) + ".pub").split()[1]
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"tag v1 is signed by the ssh key {other}, which keys/signers does not list"
    ]


def test_verify_an_unsigned_label_tag_fails(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="plain")
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == ["tag plain is not signed; keys/signers lists who "
                                            "may sign it"]  # fmt: skip


def test_verify_a_label_tag_not_in_the_clone_checks_the_commit(
    tmp_path, lib, keys, run_qola
) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    git(root / "3rdparty" / "lib", "tag", "-d", "v1")
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.unsigned[:12]} is not signed; keys/signers lists who may sign it (its "
        "label, tag v1, is not in the clone: checked out by SHA, without tags)"
    ]


def test_verify_either_file_serves_when_both_are_given(tmp_path, lib, keys, run_qola) -> None:
    for pin in (lib.ssh_signed, lib.gpg_signed):
        folder = tmp_path / pin[:7]
        folder.mkdir()
        root = checked_out(folder, lib, pin, keys, SSH + GPG, run_qola)
        res = run_qola("verify", cwd=root)
        assert res.exit_code == 0, res.stdout + res.stderr


def test_verify_a_repository_gpg_program_never_runs(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.gpg_signed, keys, SSH + GPG, run_qola)
    ran = tmp_path / "ran"
    evil = tmp_path / "evil"
    evil.write_text(f"#!/bin/sh\ntouch {ran}\nexit 0\n")
    evil.chmod(0o755)
    clone = root / "3rdparty" / "lib"
    for key in ("gpg.program", "gpg.openpgp.program", "gpg.ssh.program", "gpg.x509.program"):
        git(clone, "config", key, str(evil))
    git(clone, "config", "gpg.ssh.allowedSignersFile", str(root / "keys" / "signers"))
    git(clone, "config", "gpg.minTrustLevel", "ultimate")
    assert run_qola("verify", cwd=root).exit_code == 0
    assert not ran.exists()
    # An unsigned pin is no pass either, whatever the repository's programs would say.
    (tmp_path / "two").mkdir()
    unsigned = checked_out(tmp_path / "two", lib, lib.unsigned, keys, GPG, run_qola)
    for key in ("gpg.program", "gpg.ssh.program"):
        git(unsigned / "3rdparty" / "lib", "config", key, str(evil))
    assert run_qola("verify", cwd=unsigned).exit_code == 1
    assert not ran.exists()


def test_verify_a_key_file_outside_the_root_is_refused(tmp_path, lib, keys, run_qola) -> None:
    root = project(tmp_path, lib, lib.ssh_signed, keys, 'allowed-signers = "../signers"\n')
    (tmp_path / "signers").write_text(keys.signers())
    before = snapshot(root)
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 2
    assert "deps.lib.allowed-signers: '../signers' leads out of the root" in res.stderr
    assert snapshot(root) == before


def test_a_missing_key_file_is_a_manifest_error(tmp_path, lib, keys, run_qola) -> None:
    root = project(tmp_path, lib, lib.ssh_signed, keys, 'keyring = "keys/none.asc"\n')
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 2
    assert f"deps.lib.keyring: 'keys/none.asc' ({root / 'keys' / 'none.asc'}) does not " \
        "exist" in res.stderr


def test_the_legacy_form_takes_name_allowed_signers(tmp_path, lib, keys, run_qola) -> None:
    root = project(tmp_path, lib, lib.unsigned, keys, "")
    (root / ".gitmodules").write_text(f'[submodule "lib"]\n\tpath = 3rdparty/lib\n\t'
                                      f"url = {lib.served}\n")  # fmt: skip
    (root / "qola.toml").write_text(f'[qola]\nlib_commit = "{lib.unsigned}"\n'
                                    'lib_allowed_signers = "keys/signers"\n')  # fmt: skip
    assert run_qola("checkout", "-q", cwd=root).exit_code == 0
    code, document = verify_json(run_qola, root)
    assert code == 1
    assert signature_problems(document) == [
        f"commit {lib.unsigned[:12]} is not signed; keys/signers lists who may sign it"
    ]


def test_sbom_records_who_signed_the_pin(tmp_path, lib, keys, run_qola) -> None:
    pytest.importorskip("cyclonedx")
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    res = run_qola("sbom", "--format", "cyclonedx", cwd=root)
    assert res.exit_code == 0, res.stderr
    document = json.loads(res.stdout)
    [component] = [c for c in document["components"] if c["name"] == "lib"]
    said = {p["name"]: p["value"] for p in component.get("properties", [])}
    assert said["qola:verified-by"] == f"dev@example.com (ssh key {keys.ssh_fingerprint})"
    assert said["qola:verified-on"] == f"commit {lib.ssh_signed[:12]}"  # not a tag of it
    spdx = run_qola("sbom", "--format", "spdx", cwd=root)
    assert spdx.exit_code == 0, spdx.stderr
    notes = [a["comment"] for a in json.loads(spdx.stdout).get("annotations", [])]
    notes += [a["comment"] for p in json.loads(spdx.stdout)["packages"]
              for a in p.get("annotations", [])]  # fmt: skip
    assert (f"qola verified a signature on the pin's commit {lib.ssh_signed[:12]} with "
            f"dev@example.com (ssh key {keys.ssh_fingerprint})") in notes  # fmt: skip


def test_sbom_says_the_signature_was_the_label_tags(tmp_path, lib, keys, run_qola) -> None:
    """An unsigned commit labelled by its signed tag: the document says which was checked."""
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    res = run_qola("sbom", "--format", "cyclonedx", cwd=root)
    assert res.exit_code == 0, res.stderr
    [component] = [c for c in json.loads(res.stdout)["components"] if c["name"] == "lib"]
    said = {p["name"]: p["value"] for p in component.get("properties", [])}
    assert said["qola:verified-on"] == "tag v1"


# bump, add and freeze: nothing unsigned is pinned unless --allow-unsigned says so.


def test_bump_to_an_unsigned_commit_refuses_and_changes_nothing(
    tmp_path, lib, keys, run_qola
) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", lib.untagged, cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr
    assert (
        f"qola: lib: commit {lib.untagged[:12]} is not signed; keys/signers lists who may "
        "sign it; nothing was changed\n"
        "hint: pin a commit (or a tag) signed by a key keys/signers lists, or add "
        "--allow-unsigned to pin it all the same"
    ) in res.stderr
    assert snapshot(root) == before


def test_bump_to_a_commit_signed_by_another_key_refuses(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", lib.other_signed, cwd=root)
    assert res.exit_code == 4
    assert "which keys/signers does not list; nothing was changed" in res.stderr
    assert snapshot(root) == before


def test_bump_to_a_signed_commit_pins_it(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    res = run_qola("bump", "lib", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert f'commit = "{lib.tip}"' in (root / "qola.toml").read_text()
    assert run_qola("verify", cwd=root).exit_code == 0


def test_bump_allow_unsigned_is_recorded_in_the_commit(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    res = run_qola("bump", "lib", "--to", lib.other_signed, "--allow-unsigned", "--commit",
                   cwd=root)  # fmt: skip
    assert res.exit_code == 0, res.stderr
    message = git(root, "log", "-1", "--format=%B")
    assert (
        f"Pinned with --allow-unsigned: commit {lib.other_signed[:12]} is signed by the ssh "
        "key" in message
    )
    code, document = verify_json(run_qola, root)
    assert code == 1 and signature_problems(document)


def test_bump_offline_checks_the_clone(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    clone = root / "3rdparty" / "lib"
    git(clone, "fetch", "-q", "origin", lib.other_signed)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--offline", "--to", lib.other_signed, cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr
    assert "which keys/signers does not list; nothing was changed" in res.stderr
    assert snapshot(root) == before


def test_bump_to_a_signed_tag_labels_and_passes(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    res = run_qola("bump", "lib", "--to", "v1", "--allow-downgrade", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.unsigned}"' in text and 'tag = "v1"' in text
    assert run_qola("verify", cwd=root).exit_code == 0


def test_bump_all_refuses_an_unsigned_tip(tmp_path, lib, keys, run_qola) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola)
    git(tmp_path, "--git-dir", str(lib.served), "update-ref", "refs/heads/main", lib.gpg_signed)
    before = snapshot(root)
    res = run_qola("bump", "--all", cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr
    assert f"qola: lib: commit {lib.gpg_signed[:12]} is signed by the OpenPGP key" in res.stderr
    assert snapshot(root) == before


def test_freeze_an_unsigned_checkout_refuses_and_changes_nothing(
    tmp_path, lib, keys, run_qola
) -> None:
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    clone = root / "3rdparty" / "lib"
    git(clone, "fetch", "-q", "origin", lib.untagged)
    git(clone, "checkout", "-q", "--detach", lib.untagged)
    before = snapshot(root)
    res = run_qola("freeze", cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr
    assert (f"qola: lib: commit {lib.untagged[:12]} is not signed; keys/signers lists who may "
            "sign it; nothing was changed") in res.stderr  # fmt: skip
    assert snapshot(root) == before
    res = run_qola("freeze", "--allow-unsigned", cwd=root)
    assert res.exit_code == 0, res.stderr
    assert (f"qola: warning: lib: pinned with --allow-unsigned: commit {lib.untagged[:12]} is "
            "not signed") in res.stderr  # fmt: skip
    assert f'commit = "{lib.untagged}"' in (root / "qola.toml").read_text()


def test_add_with_allowed_signers_refuses_an_unsigned_commit(
    tmp_path, lib, keys, run_qola
) -> None:
    root = project(tmp_path, lib, lib.ssh_signed, keys, SSH)
    before = snapshot(root)
    res = run_qola("add", "two", str(lib.served), "--commit", lib.untagged,
                   "--allowed-signers", "keys/signers", cwd=root)  # fmt: skip
    assert res.exit_code == 4, res.stdout + res.stderr
    assert (f"qola: two: commit {lib.untagged[:12]} is not signed; keys/signers lists who may "
            "sign it; nothing was changed") in res.stderr  # fmt: skip
    assert snapshot(root) == before


def test_add_with_allowed_signers_pins_a_signed_commit(tmp_path, lib, keys, run_qola) -> None:
    root = project(tmp_path, lib, lib.ssh_signed, keys, SSH)
    res = run_qola("add", "two", str(lib.served), "--commit", lib.tip,
                   "--allowed-signers", "keys/signers", cwd=root)  # fmt: skip
    assert res.exit_code == 0, res.stdout + res.stderr
    assert 'allowed-signers = "keys/signers"' in (root / "qola.toml").read_text()
    res = run_qola("verify", "two", cwd=root)
    assert res.exit_code == 0, res.stdout


# A label qola chooses (for a SHA, a branch, what is checked out) is written only where its
# tag verifies: else another tag naming the commit that does, else none when the commit
# does. What is written passes verify.


def tag_served(tmp_path: Path, lib: Lib, name: str, commit: str, *how: str) -> None:
    """An annotated tag upstream (signed where how says so, with -s)."""
    work = tmp_path / f"tag-{name}"
    git(tmp_path, "clone", "-q", str(lib.served), str(work))
    run(work, "git", *how, "tag", "-a", *(["-s"] if how else []), "-m", name, name, commit)
    git(work, "push", "-q", "origin", f"refs/tags/{name}")


def dep_table(root: Path, name: str) -> str:
    text = (root / "qola.toml").read_text()
    return text[text.index(f"[deps.{name}]") :]


def test_add_a_signed_commit_under_an_unsigned_tag_pins_it_without_the_label(
    tmp_path, lib, keys, run_qola
) -> None:
    tag_served(tmp_path, lib, "v9", lib.ssh_signed)
    root = project(tmp_path, lib, lib.ssh_signed, keys, SSH)
    res = run_qola("add", "two", str(lib.served), "--commit", lib.ssh_signed,
                   "--allowed-signers", "keys/signers", cwd=root)  # fmt: skip
    assert res.exit_code == 0, res.stdout + res.stderr
    assert (f"qola: two: no tag naming {lib.ssh_signed[:12]} carries a good signature (tag v9 "
            "is not signed; keys/signers lists who may sign it): pinned without a label, on "
            "the commit's own signature") in res.stderr  # fmt: skip
    table = dep_table(root, "two")
    assert f'commit = "{lib.ssh_signed}"' in table and "tag =" not in table
    res = run_qola("verify", "two", cwd=root)
    assert res.exit_code == 0, res.stdout


def test_bump_to_a_signed_commit_under_an_unsigned_tag_pins_it_without_the_label(
    tmp_path, lib, keys, run_qola
) -> None:
    tag_served(tmp_path, lib, "v9", lib.ssh_signed)
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    res = run_qola("bump", "lib", "--to", lib.ssh_signed, cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "pinned without a label, on the commit's own signature" in res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.ssh_signed}"' in text and "tag =" not in text
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_bump_to_a_sha_labels_it_with_the_tag_that_verifies(
    tmp_path, lib, keys, run_qola
) -> None:
    # v2 (the newer release, which qola would pick) signed by a key no file lists, on the
    # commit the listed key's v1 names: whoever can push a tag cannot block the pin.
    tag_served(tmp_path, lib, "v2", lib.unsigned, *ssh_sign(keys.ssh_other))
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", "v2", "--allow-downgrade", cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr  # named: checked as it is
    assert "qola: lib: tag v2 is signed by the ssh key" in res.stderr
    assert snapshot(root) == before
    res = run_qola("bump", "lib", "--to", lib.unsigned, "--allow-downgrade", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.unsigned}"' in text and 'tag = "v1"' in text
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


def test_bump_to_an_unsigned_commit_whose_tags_do_not_verify_names_both(
    tmp_path, lib, keys, run_qola
) -> None:
    tag_served(tmp_path, lib, "v8", lib.untagged)
    root = checked_out(tmp_path, lib, lib.ssh_signed, keys, SSH, run_qola)
    before = snapshot(root)
    res = run_qola("bump", "lib", "--to", lib.untagged, cwd=root)
    assert res.exit_code == 4, res.stdout + res.stderr
    assert (f"qola: lib: commit {lib.untagged[:12]} is not signed; keys/signers lists who may "
            "sign it, nor does a tag naming it carry a good signature (tag v8 is not signed; "
            "keys/signers lists who may sign it); nothing was changed") in res.stderr  # fmt: skip
    assert snapshot(root) == before


def test_freeze_a_signed_commit_under_an_unsigned_local_tag_writes_no_label(
    tmp_path, lib, keys, run_qola
) -> None:
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    clone = root / "3rdparty" / "lib"
    git(clone, "fetch", "-q", "origin", lib.ssh_signed)
    git(clone, "tag", "-a", "-m", "mine", "v9", lib.ssh_signed)
    git(clone, "checkout", "-q", "--detach", lib.ssh_signed)
    res = run_qola("freeze", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    text = (root / "qola.toml").read_text()
    assert f'commit = "{lib.ssh_signed}"' in text and "tag =" not in text
    res = run_qola("verify", cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr


@pytest.mark.parametrize("command", ["add", "bump", "freeze"])
def test_allow_unsigned_help_says_what_records_it(run_qola, command) -> None:
    # freeze and add make no commit: the warning is all that says so.
    said = " ".join(run_qola(command, "--help").stdout.split())
    assert "(a warning says so; `bump --commit` records it in its commit message)" in said


@pytest.mark.parametrize("how", [["bump", "lib", "--to", "SHA"], ["bump", "lib"],
                                 ["bump", "--all"]])  # fmt: skip
def test_a_relabel_at_the_same_commit_is_vetted_too(tmp_path, lib, keys, run_qola, how) -> None:
    """An unsigned annotated tag on the signed tip of main: the first bump pins the tip
    unlabelled, and a second one, with nothing to move, must not label it with that tag
    (verify of a fresh clone, which fetches the tag, would then fail)."""
    tag_served(tmp_path, lib, "v9", lib.tip)
    root = checked_out(tmp_path, lib, lib.unsigned, keys, SSH, run_qola, label="v1")
    res = run_qola("bump", "lib", "--to", lib.tip, cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "tag =" not in (root / "qola.toml").read_text()
    res = run_qola(*[word.replace("SHA", lib.tip) for word in how], cwd=root)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert "tag =" not in (root / "qola.toml").read_text()
    shutil.rmtree(root / "3rdparty" / "lib")
    assert run_qola("checkout", "-q", cwd=root).exit_code == 0
    for check in (["verify"], ["verify", "--remote"]):
        res = run_qola(*check, cwd=root)
        assert res.exit_code == 0, res.stdout + res.stderr
