"""The benchmark script still runs end to end (its timings are not checked: that is its job)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_bench_quick_run_measures_every_row_it_is_asked_for(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run.py"),
            "--quick",
            "--only",
            "noop,cold,workflow,nested",
            "--deps",
            "1,10",
            "--repeat",
            "1",
            "--cold-repeat",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out.read_text())
    sections = document["sections"]
    for n in (1, 10):
        assert set(sections[f"noop N={n}"]) >= {
            "qola checkout",
            "git submodule update",
            "qola verify",
            "git submodule status",
        }
    goals = {goal["name"]: goal for goal in document["goals"]}
    # What does not depend on the machine's speed is checked: the no-op and verify
    # never reached the server, and the cold rows moved the bytes they should.
    connections = goals["no-op checkout+verify: connections to the server"]
    assert (connections["value"], connections["status"]) == (0, "PASS")
    cold = sections["cold"]
    clone = cold["git clone + checkout"]["received"]
    assert cold["qola checkout"]["received"] <= cold["git fetch --depth 1"]["received"] * 1.05
    assert cold["qola checkout"]["received"] < clone
    assert cold["qola checkout --cache"]["received"] < 0.01 * clone
    # A first fill of the cache fetches what a checkout without it does, not the history.
    fill = cold["qola checkout --cache, first fill"]["received"]
    assert fill <= cold["git fetch --depth 1"]["received"] * 1.05
    nested = sections["nested"]
    floors = nested["depth-1 floors"]["received"]
    assert nested["qola checkout"]["received"] <= floors * 1.05
    assert nested["git submodule update"]["received"] > 2 * floors
    assert nested["qola checkout --cache"]["received"] < 0.01 * floors
    workflow = sections["workflow"]
    branch = workflow["git fetch main"]["received"]
    for command in ("qola diff", "qola outdated"):  # commits only: no tree, no blob
        assert workflow[command]["received"] < workflow["git fetch main blob:none"]["received"]
        assert workflow[command]["received"] < 0.01 * branch
    assert re.search(r"goal +measured +goal +result\n", proc.stdout)  # the table of goals


def test_bench_provider_quick_run_measures_both_fetchcontent_and_the_provider(tmp_path):
    out = tmp_path / "provider.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "cmake_provider.py"), "--quick", "--repeat", "1",
         "--cmake", shutil.which("cmake") or "cmake", "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [result] = json.loads(out.read_text())["results"]
    assert set(result["reconfigure_ms"]) >= {"fetchcontent", "provider", "no dependencies"}
    # The bytes do not depend on the machine's speed: qola fetched far less than either clone.
    cold = result["cold"]
    assert cold["history"]["qola"] < 0.2 * cold["history"]["fetchcontent"]
    assert cold["withsub"]["qola"] < 0.6 * cold["withsub"]["fetchcontent"]


@pytest.mark.skipif(not (shutil.which("gpg") and shutil.which("ssh-keygen")),
                    reason="needs gpg and ssh-keygen")  # fmt: skip
def test_bench_signatures_measures_verify_with_and_without_keys(tmp_path):
    out = tmp_path / "signatures.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "signatures.py"), "--deps", "2", "--repeat", "1",
         "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    variants = json.loads(out.read_text())["variants"]
    assert set(variants) == {"plain", "ssh", "openpgp"}
    assert variants["plain"]["ratio"] == 1.0
