"""What QoLA.cmake and qola write into generated CMake files holds any path as it is.

A path's quote, `$`, `#`, brackets or newline must neither break a generated file (the
results file, the qola-verify script) nor add code to it; a path CMake cannot pass on
as one list item stops the configure before anything moves.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Upstream
from repos import head
from test_cmake import BAD_SHA, GENERATORS, MODULE, Consumer, _pypi_cmake, make_consumer

from qola.output.cmake_results import CMakeResult, cmake_quote, render

# Each of these would end a quoted argument, expand or close a bracket argument: `${HOME}`
# and `$ENV{PATH}` would expand, `]=]` close `[=[ ... ]=]`. (Not `#`: CMake 3.21 refuses
# custom targets in a build folder whose path holds one.)
AWKWARD = 'we"ird ${HOME} $ENV{PATH} [=[x]=]'


def moved_to(consumer: Consumer, folder: Path) -> Consumer:
    """The consumer's source moved into folder (its interpreter wrapper stays put)."""
    folder.mkdir()
    shutil.move(consumer.src, folder / "src")
    return dataclasses.replace(consumer, src=folder / "src", build=folder / "build")


@pytest.mark.parametrize("version", ["3.21", "newest"])
@pytest.mark.parametrize("generator", GENERATORS, ids=["ninja", "make"])
def test_source_folder_with_quote_dollar_brackets_configures_and_verifies(
    version: str, generator: str, tmp_path: Path, upstream: Upstream
) -> None:
    plain = make_consumer(tmp_path, upstream, _pypi_cmake(version), generator, upstream.lib_v1)
    # (CMake's own Makefile.cmake breaks on a quote in the build folder's path.)
    folder = AWKWARD if generator == "Ninja" else AWKWARD.replace('"', "")
    consumer = moved_to(plain, tmp_path / folder)

    consumer.configure()

    assert head(consumer.lib) == upstream.lib_v1
    assert consumer.exported()["source_dir"] == consumer.lib.as_posix()
    proc = consumer.build_("--target", "qola-verify")
    assert "1 dependency matches the manifest" in proc.stdout
    consumer.configure()  # (no stamp: its lists cannot hold brackets, so qola runs again)
    assert head(consumer.lib) == upstream.lib_v1


@pytest.mark.parametrize("version", ["3.21", "newest"])
def test_verify_script_of_a_manifest_folder_with_a_newline_adds_no_code(
    version: str, tmp_path: Path, upstream: Upstream
) -> None:
    consumer = make_consumer(tmp_path, upstream, _pypi_cmake(version), "Ninja", upstream.lib_v1)
    # A folder name that, pasted raw into the script, would end a line and run code.
    folder = consumer.src / 'x")\nfile(WRITE injected.txt "yes")\n#'
    folder.mkdir()
    (consumer.manifest).rename(folder / "qola.toml")
    lists = consumer.src / "CMakeLists.txt"
    lists.write_text(
        lists.read_text().replace(
            "MANIFEST qola.toml",
            'MANIFEST "x\\")\\nfile(WRITE injected.txt \\"yes\\")\\n#/qola.toml" ROOT .',
        )
    )

    consumer.configure()
    # What the qola-verify target runs (run here directly: Ninja's and Make's own rules
    # cannot name a file whose path holds a newline).
    (script,) = (consumer.build / "qola").glob("verify-*.cmake")
    env = dict(os.environ) | consumer.env
    proc = subprocess.run([str(consumer.cmake), "-P", str(script)], capture_output=True,
                          text=True, cwd=consumer.build, env=env)  # fmt: skip

    assert proc.returncode == 0, proc.stderr
    assert "1 dependency matches the manifest" in proc.stdout
    assert not list(consumer.build.rglob("injected.txt"))
    assert not (tmp_path / "injected.txt").exists()


@pytest.mark.parametrize("version", ["3.21", "newest"])
def test_quoted_argument_holds_any_text_exactly(version: str, tmp_path: Path) -> None:
    texts = ["a]=", "]=]", "\nstarts", "\r\nends\r", 'q"d \\" \\', "${HOME} $ENV{PATH}", "a;b\\;c",
             "\ttab #h @x@", ""]  # fmt: skip
    script = tmp_path / "quote.cmake"
    lines = [f'set(_QOLA_MODULE_DIR "{MODULE.parent.as_posix()}")',
             f'include("{(MODULE.parent / "QoLARun.cmake").as_posix()}")']  # fmt: skip
    for at, text in enumerate(texts):
        value = tmp_path / f"value{at}"
        generated = tmp_path / f"generated{at}.cmake"
        lines += [
            f"set(text {cmake_quote(text)})",  # (file(READ) would drop carriage returns)
            "_qola_quote(quoted \"${text}\")",
            f'file(WRITE "{generated.as_posix()}" "set(back ${{quoted}})")',
            f'include("{generated.as_posix()}")',
            f'file(WRITE "{value.as_posix()}.back" "${{back}}")',
        ]
    script.write_text("\n".join(lines) + "\n")

    subprocess.run([str(_pypi_cmake(version)), "-P", str(script)], check=True)

    for at, text in enumerate(texts):
        assert (tmp_path / f"value{at}.back").read_bytes() == text.encode(), repr(text)


@pytest.mark.parametrize("version", ["3.21", "newest"])
def test_results_file_holds_any_source_folder_and_sha_exactly(version: str, tmp_path: Path) -> None:
    awkward = tmp_path / 'q"d$ {x} ${HOME} ;s [=[b]=] \\e #h\nnl\ttab'
    results = tmp_path / "results.cmake"
    results.write_text(render([CMakeResult("lib", "0" * 40, awkward)]))
    out = tmp_path / "out.txt"
    script = tmp_path / "read.cmake"
    script.write_text(
        f'include("{results.as_posix()}")\n'
        f'file(WRITE "{out.as_posix()}" "${{QOLA_LIB_SOURCE_DIR}}|${{QOLA_LIB_SHA}}")\n'
    )

    subprocess.run([str(_pypi_cmake(version)), "-P", str(script)], check=True)

    assert out.read_text() == f"{awkward.as_posix()}|{'0' * 40}"


@pytest.mark.parametrize("folder", ["semi;colon", "open[bracket", "close]bracket"])
def test_source_folder_cmake_cannot_pass_as_one_list_item_stops_before_anything_moves(
    folder: str, tmp_path: Path, upstream: Upstream
) -> None:
    plain = make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)
    consumer = moved_to(plain, tmp_path / folder)

    proc = consumer.configure(check=False)

    assert proc.returncode != 0
    message = " ".join(proc.stderr.split())
    assert (
        f"qola_checkout: the manifest {consumer.manifest.as_posix()} holds a `;`, or a `[` "
        "or `]` without its pair, which CMake cannot pass on to qola as it is; rename the "
        "folder"
    ) in message, proc.stderr
    assert not consumer.lib.exists()
    assert consumer.python_starts() == 0


def test_failed_configure_in_an_awkward_folder_shows_a_command_the_shell_reads_back(
    tmp_path: Path, upstream: Upstream
) -> None:
    plain = make_consumer(tmp_path, upstream, _pypi_cmake("newest"), "Ninja", upstream.lib_v1)
    consumer = moved_to(plain, tmp_path / (AWKWARD + " `touch pwned`"))
    consumer.pin(upstream.lib, BAD_SHA)

    proc = consumer.configure(check=False)

    assert proc.returncode != 0
    assert "The command was:" in proc.stderr, proc.stderr
    after = proc.stderr.split("The command was:", 1)[1]
    shown = next(line for line in after.splitlines() if line.strip()).strip()
    # The words as sh reads them (run where a `touch` that got out would leave its file).
    read = subprocess.run(["sh", "-c", f"printf '%s\\0' {shown}"], cwd=tmp_path,
                          capture_output=True, text=True, check=True)  # fmt: skip
    words = read.stdout.split("\0")[:-1]
    assert not (tmp_path / "pwned").exists()
    assert words[0] == f"PYTHONPATH={MODULE.parent.parent}"
    assert words[1:5] == [consumer.env["QOLA_PYTHON"], "-m", "qola.cli", "checkout"]
    assert words[5:7] == ["--manifest", str(consumer.manifest)]
    assert str(consumer.build / "qola") in words[-1]
