"""Other people's text (file names from a dependency, commit subjects, author names, git's
messages) reaches no terminal, CI log, Markdown or JSON with a control character that
acts: file names are quoted as git quotes them, other text shows each control as an
escape, and no line qola writes is a CI runner's command unless qola made it one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo, snapshot

from qola.base import safetext

# A file name that, printed raw, writes two GitHub workflow commands of its own.
FORGED = "gen.txt\n::error file=qola.toml,line=1,title=forged::anything\n::stop-commands::x"
# A commit subject that, printed raw, retitles the terminal and clears the screen.
RETITLE = "fix \x1b]0;PWNED\x07 the build\x1b[2J"


@pytest.fixture
def hostile_upstream(tmp_path: Path) -> tuple[Path, str, str]:
    """A dependency whose v1 holds FORGED, and whose next commit (v2) is titled RETITLE
    by an author whose name holds an escape sequence: (repository, v1, v2)."""
    lib = init_repo(tmp_path / "hostile")
    v1 = commit_file(lib, FORGED, "generated\n", "a generated file")
    (lib / "lib.txt").write_text("v2\n")
    git(lib, "add", "lib.txt")
    author = "Eve \x1b[8mhidden\x1b[0m <eve@example.invalid>"  # colour codes qola uses too
    git(lib, "commit", "-q", f"--author={author}", "-m", RETITLE)
    return lib, v1, head(lib)


@pytest.fixture
def hostile_project(tmp_path: Path, hostile_upstream) -> Path:
    """A project pinning the hostile dependency at v1 (committed), not checked out."""
    lib, v1, _ = hostile_upstream
    root = init_repo(tmp_path / "project")
    (root / "qola.toml").write_text(
        f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{lib}"\ncommit = "{v1}"\ntrack = "main"\n'
    )
    (root / ".gitignore").write_text("/3rdparty/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pins")
    return root / "qola.toml"


def lines_a_runner_obeys(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def test_path_is_quoted_as_git_quotes_it_only_when_it_must_be():
    assert safetext.path("src/a b.c") == "src/a b.c"
    assert safetext.path("ü.txt") == "ü.txt"
    assert safetext.path('a\n"b\\\x1b') == '"a\\n\\"b\\\\\\033"'


def test_line_shows_each_control_character_as_an_escape():
    assert safetext.line(RETITLE) == "fix \\033]0;PWNED\\a the build\\033[2J"
    assert safetext.line("a\u202eb\r") == "a\\342\\200\\256b\\r"


def test_for_log_keeps_line_breaks_and_own_colours_and_defuses_runner_commands():
    shown = safetext.for_log("\x1b[31mred\x1b[0m\n  ::error::x\nsee ##[group]\x1b]8;;u\x07\n")
    assert shown.startswith("\x1b[31mred\x1b[0m\n")
    assert lines_a_runner_obeys(shown) == []
    assert "\x1b]" not in shown and "\\033]8;;u\\a" in shown
    assert safetext.for_log("::notice::qola's own\n", commands=True) == "::notice::qola's own\n"


def test_shell_word_quotes_control_characters_the_way_bash_reads_them():
    assert safetext.shell_word("/a b") == "'/a b'"
    assert safetext.shell_word("/a\nb's") == "$'/a\\nb\\'s'"


def test_json_document_keeps_the_data_and_holds_no_runner_command():
    document = {"message": "##[error]x\n::error::y"}
    text = safetext.json_document(document)
    assert json.loads(text) == document
    assert lines_a_runner_obeys(text) == []


def test_verify_text_quotes_a_modified_file_name_with_a_newline(hostile_project, run_qola):
    assert run_qola("checkout", "-m", str(hostile_project)).exit_code == 0
    with open(hostile_project.parent / "3rdparty" / "lib" / FORGED, "a") as out:
        out.write("changed by the build\n")
    res = run_qola("verify", "-m", str(hostile_project))
    assert res.exit_code == 1
    assert lines_a_runner_obeys(res.stdout + res.stderr) == []
    assert safetext.path(FORGED) + ": modified" in res.stdout
    assert safetext.path(FORGED).startswith('"gen.txt\\n::error')


def test_verify_github_annotations_stay_commands_and_carry_the_name_on_one_line(
    hostile_project, run_qola
):
    assert run_qola("checkout", "-m", str(hostile_project)).exit_code == 0
    with open(hostile_project.parent / "3rdparty" / "lib" / FORGED, "a") as out:
        out.write("changed by the build\n")
    res = run_qola("verify", "--format", "github", "-m", str(hostile_project))
    assert res.exit_code == 1
    annotation = "::error file=qola.toml,line=4,title=qola verify%3A lib dirty::lib "
    assert res.stdout.startswith(annotation)
    assert len(res.stdout.splitlines()) == 1


def test_checkout_refusal_quotes_the_file_name_and_writes_nothing(
    hostile_project, hostile_upstream, run_qola
):
    _, v1, v2 = hostile_upstream
    assert run_qola("checkout", "-m", str(hostile_project)).exit_code == 0
    with open(hostile_project.parent / "3rdparty" / "lib" / FORGED, "a") as out:
        out.write("changed by the build\n")
    hostile_project.write_text(hostile_project.read_text().replace(v1, v2))
    before = snapshot(hostile_project.parent)
    res = run_qola("checkout", "-m", str(hostile_project))
    assert res.exit_code == 4
    assert f"  uncommitted: {safetext.path('3rdparty/lib/' + FORGED)} (modified)\n" in res.stderr
    assert lines_a_runner_obeys(res.stderr) == []
    assert snapshot(hostile_project.parent) == before


@pytest.mark.parametrize(
    "command",
    [
        ("bump", "lib", "--dry-run"),
        ("diff",),
        ("diff", "--format", "markdown"),
        ("outdated", "-v"),
        ("outdated", "--format", "markdown"),
    ],
    ids=["bump", "diff", "diff-markdown", "outdated", "outdated-markdown"],
)
def test_commit_subjects_and_authors_reach_the_output_without_control_characters(
    command, hostile_project, hostile_upstream, run_qola
):
    _, v1, v2 = hostile_upstream
    if command[0] == "diff":
        hostile_project.write_text(hostile_project.read_text().replace(v1, v2))
    res = run_qola(*command, "-m", str(hostile_project))
    assert res.exit_code in (0, 1), res.stderr
    shown = res.stdout + res.stderr
    assert "the build" in shown
    assert "\x1b" not in shown and "\x07" not in shown
    if command[-1] != "markdown":
        assert "fix \\033]0;PWNED\\a the build\\033[2J" in shown
    if command[0] != "bump":  # (bump lists no authors)
        assert "Eve \\033[8mhidden\\033[0m" in shown.replace("\\\\", "\\").replace("\\[", "[")


def test_verify_job_summary_carries_no_control_character(
    hostile_project, run_qola, tmp_path
):
    assert run_qola("checkout", "-m", str(hostile_project)).exit_code == 0
    with open(hostile_project.parent / "3rdparty" / "lib" / FORGED, "a") as out:
        out.write("changed by the build\n")
    summary = tmp_path / "summary.md"
    res = run_qola("verify", "--format", "github", "-m", str(hostile_project),
                   env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert res.exit_code == 1
    written = summary.read_text()
    assert "gen.txt\\\\n::error" in written  # Markdown shows the backslash
    assert lines_a_runner_obeys(written) == []


def test_bump_commit_message_carries_the_subjects_without_control_characters(
    hostile_project, hostile_upstream, run_qola
):
    _, _, v2 = hostile_upstream
    root = hostile_project.parent
    assert run_qola("checkout", "-m", str(hostile_project)).exit_code == 0
    res = run_qola("bump", "lib", "--commit", "-m", str(hostile_project))
    assert res.exit_code == 0, res.stderr
    message = git(root, "log", "-1", "--format=%B")
    assert f"{v2[:7]} fix \\033]0;PWNED\\a the build\\033[2J" in message
    assert "\x1b" not in message and "\x07" not in message


def test_the_manifest_refuses_every_character_output_escapes():
    """The no-op prints a manifest's paths as they are: what the manifest accepts must be
    what the full command's output shows unchanged."""
    from qola.manifest import values

    assert values.CONTROL.pattern == safetext.CONTROL.pattern


TOKEN_URL = "https://x-access-token:ghp_SECRET@example.invalid/lib.git?private_token=SECRET2"


def test_no_url_credentials_reach_any_output(tmp_path: Path, run_qola) -> None:
    """A manifest URL with a token (a user's, or a CI's that wrote it in): verify's text,
    JSON and JUnit, and checkout's errors, name the URL without it."""
    lib = init_repo(tmp_path / "lib")
    pin = commit_file(lib, "a.txt", "a\n", "a")
    git(lib, "tag", "-a", "-m", "v1", "v1")
    root = init_repo(tmp_path / "project")
    manifest = root / "qola.toml"
    manifest.write_text(f'[deps.lib]\npath = "3rdparty/lib"\nurl = "{lib}"\ncommit = "{pin}"\n'
                        'tag = "v1"\n')  # fmt: skip
    assert run_qola("checkout", "-m", str(manifest)).exit_code == 0
    clone = root / "3rdparty/lib"
    commit_file(clone, "b.txt", "b\n", "b")
    git(clone, "tag", "-f", "-a", "-m", "moved", "v1")  # the clone's label names another commit
    git(clone, "checkout", "-q", pin)
    manifest.write_text(manifest.read_text().replace(str(lib), TOKEN_URL))
    said = []
    for form in ("text", "json", "junit"):
        res = run_qola("verify", "--format", form, "-m", str(manifest))
        assert res.exit_code == 1, res.stdout + res.stderr
        said.append(res.stdout + res.stderr)
    summary = tmp_path / "summary.md"  # GitHub's job summary: the run's page shows it
    res = run_qola("verify", "--format", "github", "-m", str(manifest),
                   env={"GITHUB_STEP_SUMMARY": str(summary)})  # fmt: skip
    assert res.exit_code == 1
    said += [res.stdout + res.stderr, summary.read_text()]
    assert "example.invalid" in summary.read_text()
    assert "fetch -q --force --no-tags 'https://example.invalid/lib.git' refs/tags/v1" in said[0]
    assert "https://example.invalid/lib.git" in said[1] and "example.invalid" in said[2]
    # A clone from the URL fails (nothing listens): its error names the URL, without the token.
    other = manifest.read_text().replace('path = "3rdparty/lib"', 'path = "3rdparty/other"')
    unreachable = "https://x-access-token:ghp_SECRET@127.0.0.1:9/lib.git"
    manifest.write_text(other.replace(TOKEN_URL, unreachable))
    failed = run_qola("checkout", "-m", str(manifest))
    assert failed.exit_code == 3
    said.append(failed.stdout + failed.stderr)
    assert "127.0.0.1:9" in said[-1]
    for text in said:
        assert "SECRET" not in text and "x-access-token" not in text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("clone https://u:p@h.example/x.git into a", "clone https://h.example/x.git into a"),
        ("'https://tok@h.example/x?t=1' and ssh://me:pw@h/x",
         "'https://h.example/x' and ssh://me@h/x"),
        ("git@h.example:o/x.git stays; so does file:///srv/x?y",
         "git@h.example:o/x.git stays; so does file:///srv/x?y"),
        ("fetch me:ghp_SECRET@example.invalid:lib.git refs/tags/v1",
         "fetch me@example.invalid:lib.git refs/tags/v1"),  # scp-like: its password
    ],
)
def test_without_credentials_strips_each_url_in_a_text(text: str, shown: str) -> None:
    assert safetext.without_credentials(text) == shown
    assert safetext.for_log(text) == shown


def test_a_url_urlsplit_refuses_is_cut_not_a_crash() -> None:
    said = safetext.for_log("clone http://tok@[::1/x?t=1 failed")
    assert "tok" not in said and "t=1" not in said and said.startswith("clone http://")
