"""What checking signatures adds to `qola verify`, against the same verify without keys.

    python bench/signatures.py [--deps 10] [--repeat 9] [--json PATH]

Builds, in a temporary folder, N libraries (local repositories) whose tip is signed twice
over: the commit with an ssh key, and an annotated tag on it with an OpenPGP key, both made
here (ssh-keygen; gpg in a GNUPGHOME of the benchmark's own). One project pins all N at
their tip and is checked out once; three manifests beside each other pin the same commits:

  plain    no keys: what verify costs without signatures
  ssh      allowed-signers = "keys/signers" (git verify-commit, ssh-keygen -Y verify)
  openpgp  keyring = "keys/dev.asc" and tag = "v1" (one gpg --import, git verify-tag)

and times `qola -m <manifest> verify`, interleaved so that machine noise hits each alike,
printing medians and each one's ratio to plain. The qola under test is this checkout.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fixtures as fx

REPO = Path(__file__).resolve().parent.parent


def build(base: Path, count: int) -> tuple[fx.Git, str, Path]:
    env = fx.isolated_env(base)
    gnupg = base / "gnupg"
    gnupg.mkdir(mode=0o700)
    env["GNUPGHOME"] = str(gnupg)
    git = fx.Git(env)
    git.run(base, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", base / "key")
    git.run(base, "gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Dev <dev@example.com>",
            "ed25519", "sign", "0")  # fmt: skip
    root = base / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "keys").mkdir()
    public = (base / "key.pub").read_text().strip()
    (root / "keys" / "signers").write_text(f"dev@example.com {public}\n")
    (root / "keys" / "dev.asc").write_text(git.run(base, "gpg", "--armor", "--export") + "\n")
    tables: list[tuple[str, str, str]] = []
    for i in range(count):
        lib = base / "libs" / f"lib{i}"
        lib.mkdir(parents=True)
        git(lib, "init", "-q", "-b", "main")
        (lib / "lib.txt").write_text(f"lib {i}\n")
        git(lib, "add", "lib.txt")
        git(lib, "-c", "gpg.format=ssh", "-c", f"user.signingkey={base / 'key'}", "commit", "-q",
            "-S", "-m", "signed")  # fmt: skip
        git(lib, "-c", "user.signingkey=dev@example.com", "tag", "-s", "-m", "release", "v1")
        tables.append((f"lib{i}", str(lib), git(lib, "rev-parse", "HEAD")))
    for variant, extra in (("plain", ""), ("ssh", 'allowed-signers = "keys/signers"\n'),
                           ("openpgp", 'keyring = "keys/dev.asc"\ntag = "v1"\n')):  # fmt: skip
        text = "".join(f'[deps.{name}]\npath = "3rdparty/{name}"\nurl = "{url}"\n'
                       f'commit = "{sha}"\n{extra}\n' for name, url, sha in tables)  # fmt: skip
        (root / f"{variant}.toml").write_text(text)
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "pins")
    python = fx.plain_python(base, REPO)
    # The openpgp manifest's checkout fetches the label's tag as well, so every clone
    # holds v1 for verify-tag.
    git.run(root, python, "-m", "qola", "-m", "openpgp.toml", "checkout", "-q")
    # Signing started an agent for the benchmark's own GNUPGHOME; verifying starts none.
    subprocess.run(["gpgconf", "--homedir", str(gnupg), "--kill", "gpg-agent"], check=False)
    return git, python, root


def measure(git: fx.Git, python: str, root: Path, repeat: int) -> dict[str, list[float]]:
    variants = ["plain", "ssh", "openpgp"]
    times: dict[str, list[float]] = {v: [] for v in variants}
    for i in range(repeat + 1):  # the first round warms the caches and is not counted
        order = variants[i % 3:] + variants[: i % 3]
        for variant in order:
            started = time.perf_counter()
            proc = subprocess.run([python, "-m", "qola", "-m", f"{variant}.toml", "verify"],
                                  cwd=root, env=git.env, capture_output=True, text=True,
                                  check=False)  # fmt: skip
            elapsed = time.perf_counter() - started
            if proc.returncode != 0:
                sys.exit(f"qola verify ({variant}) failed:\n{proc.stdout}{proc.stderr}")
            if i:
                times[variant].append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    for tool in ("gpg", "ssh-keygen", "gpgconf"):
        if shutil.which(tool) is None:
            sys.exit(f"the benchmark needs {tool}")
    base = Path(tempfile.mkdtemp(prefix="qola-bench-signatures-"))
    try:
        git, python, root = build(base, args.deps)
        times = measure(git, python, root, args.repeat)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    plain = statistics.median(times["plain"])
    result = {}
    print(f"qola verify, N={args.deps} dependencies, median of {args.repeat}:")
    for variant, found in times.items():
        median = statistics.median(found)
        result[variant] = {"median": median, "times": found, "ratio": median / plain}
        print(f"  {variant:8} {median * 1000:7.1f} ms  {median / plain:5.2f}x plain")
    if args.json is not None:
        args.json.write_text(json.dumps({"deps": args.deps, "variants": result}, indent=2) + "\n")


if __name__ == "__main__":
    main()
