"""Conventions users bring from git and west: options before the command, -V, the manifest
found from a sub-folder, environment errors that name the variable, did-you-mean for a
misspelt [deps] table, shell completion, and one options table for click and the no-op."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from procs import environment
from procs import noop_declined as declined
from repos import git, snapshot

from qola import __version__, noop
from qola.cli import cli
from qola.commands import options

QOLA = Path(__file__).resolve().parent.parent / "qola"


# -- one table, two parsers


def _click_options(command: click.Command) -> dict[str, click.Option]:
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name}


@pytest.mark.parametrize("spec", options.COMMON + options.CHECKOUT, ids=lambda s: s.dest)
def test_noop_and_click_read_each_checkout_option_alike(spec):
    """Spellings, environment variable, flag or value, default: the same in both parsers;
    and no value the no-op takes is one click refuses."""
    param = _click_options(cli.commands["checkout"])[spec.dest]
    assert set(param.opts + param.secondary_opts) == set(spec.flags)
    assert param.envvar == spec.envvar
    assert param.is_flag == spec.is_flag
    assert set(noop._CHECKOUT) >= set(spec.flags)
    if spec.is_flag:
        return
    if spec.default is not None:
        default = param.get_default(click.Context(cli.commands["checkout"]))
        assert param.type.convert(spec.default, param, None) == param.type.convert(
            default, param, None
        )
    samples = ["1", "0", "-1", "2.5", "inf", "nan", "abc", "", "scoped", "ALL", "x", ".",
               "qola.toml", "/nonexistent/x"]  # fmt: skip
    for value in samples:
        try:
            param.type.convert(value, param, None)
            click_takes = True
        except click.BadParameter:
            click_takes = False
        if spec.accepts(value):
            assert click_takes, (spec.dest, value)


# A value each parser refuses from the environment, by kind (relative to the root).
_REFUSED = {"file": ".", "folder": "qola.toml", "choice": "bogus"}


@pytest.mark.parametrize("side", ["before", "after"])
@pytest.mark.parametrize("spec", [s for s in options.COMMON if s.envvar], ids=lambda s: s.dest)
def test_noop_and_click_let_an_option_on_either_side_beat_a_bad_environment_value(
    spec, side, pinned_by_qola, run_qola, monkeypatch, capsys
):
    """The command line wins over the environment, before the command's name as after
    it: the environment's value is then not read at all, by either parser."""
    root = pinned_by_qola.root
    good = {"manifest": str(pinned_by_qola.manifest), "root": str(root),
            "safe_directory": "scoped"}[spec.dest]  # fmt: skip
    given = [spec.flags[-1], good]
    argv = [*given, "checkout"] if side == "before" else ["checkout", *given]
    env = {spec.envvar: _REFUSED[spec.kind]}
    full = run_qola(*argv, cwd=root, env=env)
    assert (full.exit_code, full.stderr) == (0, ""), full.stderr
    also = [*given, "verify"] if side == "before" else ["verify", *given]
    assert run_qola(*also, cwd=root, env=env).exit_code == 0  # not only checkout
    monkeypatch.setenv(spec.envvar, _REFUSED[spec.kind])
    capsys.readouterr()
    assert not declined(argv, root)
    assert capsys.readouterr().out == full.stdout
    alone = run_qola("checkout", cwd=root, env=env)  # nothing on the command line: refused
    assert alone.exit_code == 2 and alone.stderr.startswith(f"qola: {spec.envvar}: ")


@pytest.mark.parametrize("spec", options.COMMON, ids=lambda s: s.dest)
def test_common_options_are_accepted_before_the_command(spec):
    group = _click_options(cli)
    assert set(group[spec.dest].opts + group[spec.dest].secondary_opts) == set(spec.flags)
    assert set(noop._COMMON) == {flag for s in options.COMMON for flag in s.flags}


def test_noop_and_cli_do_not_import_each_other():
    def imported(module: str) -> set[str]:
        tree = ast.parse((QOLA / f"{module}.py").read_text())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        return found

    assert not {"qola.cli", "qola.__main__"} & imported("noop")
    assert "qola.noop" in imported("cli")  # one way only: cli's fast start reads the no-op
    assert not {"qola.cli", "qola.noop"} & imported("commands/options")


# -- before the command, -V


def test_options_before_the_command_work_and_the_one_after_wins(pinned_clean, run_qola, tmp_path):
    elsewhere = tmp_path / "elsewhere.toml"
    res = run_qola("-q", "-m", str(pinned_clean.manifest), "verify")
    assert (res.exit_code, res.stderr) == (0, "")
    res = run_qola("-m", str(elsewhere), "verify", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0, res.stderr
    res = run_qola("-m", str(pinned_clean.manifest), "verify",
                   env={"QOLA_MANIFEST": str(elsewhere)})  # fmt: skip
    assert res.exit_code == 0, res.stderr  # the command line beats the environment


def test_verbose_before_checkout_is_read_by_the_noop_too(pinned_by_qola, run_qola):
    argv = ["-v", "checkout"]
    full = run_qola(*argv, cwd=pinned_by_qola.root)
    fast = subprocess.run([sys.executable, "-m", "qola", *argv], cwd=pinned_by_qola.root,
                          capture_output=True, text=True, env=environment(), check=False)
    assert (fast.returncode, fast.stdout, fast.stderr) == (0, full.stdout, full.stderr)
    assert fast.stderr == f"qola: manifest: {pinned_by_qola.manifest} (searched for from " \
                          f"{pinned_by_qola.root})\n"  # fmt: skip
    assert not declined(argv, pinned_by_qola.root)


@pytest.mark.parametrize("argv", [["--version", "checkout"], ["-V"], ["--jobs", "2", "checkout"],
                                  ["-x", "checkout"], ["verify", "checkout"]])  # fmt: skip
def test_noop_steps_aside_for_what_comes_before_checkout_unless_common(pinned_by_qola, argv):
    assert declined(argv, pinned_by_qola.root)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flag(flag, run_qola):
    res = run_qola(flag)
    assert (res.exit_code, res.stdout) == (0, f"qola, version {__version__}\n")


# -- the manifest found upward


def test_manifest_is_found_from_a_sub_folder(pinned_by_qola, run_qola):
    sub = pinned_by_qola.root / "src" / "deep"
    sub.mkdir(parents=True)
    res = run_qola("-v", "status", cwd=sub)
    assert res.exit_code == 0, res.stderr
    assert f"qola: manifest: {pinned_by_qola.manifest} (searched for from {sub})\n" in res.stderr
    assert res.stdout.splitlines()[1].startswith("lib ")
    fast = subprocess.run([sys.executable, "-m", "qola", "checkout"], cwd=sub,
                          capture_output=True, text=True, env=environment(), check=False)
    assert (fast.returncode, fast.stdout) == (0, run_qola("checkout", cwd=sub).stdout)


def test_manifest_search_stops_at_the_repository_top(tmp_path, run_qola):
    (tmp_path / "qola.toml").write_text("[deps.x]\n")  # above the repository: never read
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    sub = repo / "sub"
    sub.mkdir()
    before = snapshot(tmp_path)
    res = run_qola("status", cwd=sub)
    assert res.exit_code == 2
    assert res.stderr == (
        f"qola: {sub}: no qola.toml here or in a folder above, up to {repo} (its repository's "
        "top), nor does its index track a manifest (qola.toml or *qola*manifest*.toml)\n"
        "hint: create one with `qola init`, or pass --manifest PATH (or set QOLA_MANIFEST)\n"
    )
    assert snapshot(tmp_path) == before


def test_find_manifest_outside_any_repository_looks_in_the_folder_only(tmp_path):
    (tmp_path / "qola.toml").write_text("")
    sub = tmp_path / "sub"
    sub.mkdir()
    assert options.find_manifest(str(sub)) == (str(sub / "qola.toml"), False)
    assert options.find_manifest(str(tmp_path)) == (str(tmp_path / "qola.toml"), True)


# -- environment values


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [("QOLA_JOBS", "abc", "'abc' is not a valid integer"),
     ("QOLA_SAFE_DIRECTORY", "everything", "'everything' is not one of"),
     ("QOLA_OFFLINE", "maybe",
      "'maybe' is neither on (1, true, yes, on) nor off (0, false, no, off, or empty)"),
     ("QOLA_FETCH_TIMEOUT", "0", "0.0 is not in the range x>0")],
)  # fmt: skip
def test_bad_environment_value_names_the_variable(pinned_clean, run_qola, variable, value, problem):
    before = snapshot(pinned_clean.root)
    res = run_qola("checkout", "-m", str(pinned_clean.manifest), env={variable: value})
    assert res.exit_code == 2
    first, hint = res.stderr.splitlines()
    assert first.startswith(f"qola: {variable}: {problem}"), first
    assert hint.startswith(f"hint: fix or unset {variable} (it gives --")
    assert snapshot(pinned_clean.root) == before


@pytest.mark.parametrize(
    ("value", "offline"), [("0", False), ("no", False), ("1", True), ("on", True)]
)
def test_offline_variable_is_read_as_a_boolean(make_project, upstream, run_qola, value, offline):
    # On every click qola supports: click 8.2.0 alone took any non-empty value as "on".
    project = make_project(upstream.lib_tip)
    res = run_qola("checkout", "-m", str(project.manifest), env={"QOLA_OFFLINE": value})
    if offline:
        assert res.exit_code == 3, res.stderr
        assert not (project.root / "3rdparty/lib/.git").exists()
    else:
        assert res.exit_code == 0, res.stderr
        assert (project.root / "3rdparty/lib/.git").exists()


def test_bad_flag_value_still_names_the_flag(pinned_clean, run_qola):
    res = run_qola("checkout", "--jobs", "abc", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 2
    assert "Invalid value for '-j' / '--jobs'" in res.stderr


# -- did you mean [deps.lib]


@pytest.mark.parametrize("table", ["dep", "dependencies", "Deps", "dependency"])
def test_almost_deps_table_gets_did_you_mean(tmp_path, run_qola, table):
    manifest = tmp_path / "qola.toml"
    manifest.write_text(f'[{table}.lib]\npath = "lib"\nurl = "https://example.invalid/l.git"\n'
                        f'commit = "{"a" * 40}"\n')  # fmt: skip
    before = snapshot(tmp_path)
    res = run_qola("verify", "-m", str(manifest))
    assert res.exit_code == 2
    assert res.stderr == (f"qola: {manifest}: declares no dependencies\n"
                          f"hint: did you mean [deps.lib] instead of [{table}.lib]?\n")  # fmt: skip
    assert snapshot(tmp_path) == before


def test_other_tools_tables_get_the_plain_hint(tmp_path, run_qola):
    manifest = tmp_path / "qola.toml"
    manifest.write_text('[build.lib]\npath = "lib"\n')
    res = run_qola("verify", "-m", str(manifest))
    assert res.stderr.endswith("hint: add a [deps.<name>] table with path, url and commit\n")


def test_almost_deps_table_beside_real_deps_is_a_warning(pinned_clean, run_qola):
    text = pinned_clean.manifest.read_text()
    pinned_clean.manifest.write_text(text + '\n[dep.other]\npath = "other"\n')
    res = run_qola("verify", "-m", str(pinned_clean.manifest))
    assert res.exit_code == 0
    assert (f"qola: warning: {pinned_clean.manifest}: did you mean [deps.other] instead of "
            "[dep.other] (it is ignored)\n") in res.stderr  # fmt: skip


# -- counting, freeze


def test_freeze_of_an_abbreviated_pin_prints_the_short_and_the_full_sha(tmp_path, upstream,
                                                                        run_qola):  # fmt: skip
    from superprojects import legacy_superproject

    root = legacy_superproject(tmp_path / "super", upstream.lib, upstream.lib_v2)
    git(root / "3rdparty" / "lib", "checkout", "-q", upstream.lib_v2) if (
        root / "3rdparty" / "lib" / ".git").exists() else None  # fmt: skip
    manifest = root / "qola.toml"
    manifest.write_text(manifest.read_text().replace(upstream.lib_v2, upstream.lib_v2[:10]))
    assert run_qola("checkout", "-q", "-m", str(manifest)).exit_code == 0
    res = run_qola("freeze", "--dry-run", "-m", str(manifest))
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"lib {upstream.lib_v2[:10]} -> {upstream.lib_v2}"


# -- shell completion


def _complete(args: str, cwd: Path, incomplete: str = "") -> list[str]:
    """What bash completion offers after `qola ARGS INCOMPLETE`, through click's protocol
    (_QOLA_COMPLETE=bash_complete with COMP_WORDS and COMP_CWORD, as the script sets them)."""
    words = ["qola", *args.split(), incomplete]
    env = environment({"_QOLA_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(words),
                       "COMP_CWORD": str(len(words) - 1)})  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "qola"], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines() if line]


def test_completion_offers_dependency_names_from_the_manifest(pinned_by_qola, tmp_path):
    sub = pinned_by_qola.root / "src"
    sub.mkdir()
    assert _complete("checkout", sub) == ["lib"]
    assert _complete("bump", sub, "l") == ["lib"]
    assert _complete("verify", sub, "x") == []
    assert _complete(f"-m {pinned_by_qola.manifest} status", tmp_path) == ["lib"]


def test_completion_offers_the_manifest_groups_after_group(make_project):
    project = make_project(extra='groups = ["gemm", "fa"]\n')
    assert _complete("checkout --group", project.root) == ["fa", "gemm"]
    assert _complete("verify --group", project.root, "g") == ["gemm"]
    assert _complete("checkout --group fa --group", project.root) == ["gemm"]


def test_completion_offers_commands_and_options(tmp_path):
    assert _complete("", tmp_path, "ch") == ["checkout"]
    assert _complete("checkout", tmp_path, "--j") == ["--jobs"]
    assert "--verbose" in _complete("", tmp_path, "--")


def test_completion_of_a_broken_manifest_offers_nothing(tmp_path):
    (tmp_path / "qola.toml").write_text("not toml [")
    assert _complete("checkout", tmp_path) == []
    assert os.listdir(tmp_path) == ["qola.toml"]
