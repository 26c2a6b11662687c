"""The documents stand alone: every relative link and #anchor resolves, no document cites the
design notes the project's users do not have, and every test a document names exists."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted(
    [
        REPO / "README.md",
        REPO / "bench" / "README.md",
        REPO / "manifests" / "README.md",
        *(REPO / "docs").glob("*.md"),
    ]
)
# Every file of the project's own: documents, code (what it prints too), the CMake module,
# benchmarks, tests, CI scripts. Walked, not listed by git: the tests also run from an
# unpacked sdist.
_OWN_FOLDERS = ("qola", "cmake", "bench", "docs", "manifests", "tests", ".ci")
_OWN_TOP_FILES = ("README.md", "CMakeLists.txt", "pyproject.toml", "MANIFEST.in",
                  ".pre-commit-hooks.yaml")  # fmt: skip
OWN_FILES = sorted(
    {
        path
        for folder in _OWN_FOLDERS
        for path in (REPO / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    | {REPO / name for name in _OWN_TOP_FILES if (REPO / name).is_file()}
)
# Where a citation of the design notes ("DESIGN §4") could hide; this file names them itself.
CITATION_SOURCES = [path for path in OWN_FILES if path != Path(__file__).resolve()]
# What tells people how to install qola: a name on PyPI that is not qola's would install
# whatever whoever registered it put there.
INSTALL_ADVICE = [
    path
    for path in OWN_FILES
    if path.parts[len(REPO.parts)] in ("docs", "cmake", "qola") or path.name == "README.md"
]
# `pip install qola`, or qola by its name alone in a list of requirements (a
# pyproject.toml's `requires = ["scikit-build-core", "qola"]`), where a direct reference
# (`"qola @ git+…"`) is what resolves.
_PYPI_QOLA = re.compile(
    r"\bpip[x3]?\s+install\s+(?:-\S+\s+)*[\"']?qola(?![\w./@-])"
    r"|\b(?:requires|dependencies)\s*=\s*\[[^\]]*[\"']qola\s*(?:[<>=!~;][^\"']*)?[\"']"
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
# [text](target) and ![alt](target), the text possibly wrapped over lines.
_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
_CITED_TEST = re.compile(r"tests/(test_\w+\.py)::(test_\w+)")


def prose(text: str) -> str:
    """The text with fenced code blocks blanked out (line numbers kept)."""
    lines, fence = [], ""
    for line in text.splitlines():
        found = _FENCE.match(line)
        if fence:
            if found and found[1][0] == fence[0] and len(found[1]) >= len(fence):
                fence = ""
            lines.append("")
        elif found:
            fence = found[1]
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower-cased, punctuation dropped,
    each space a hyphen (github-slugger; inline markup counts only by its text)."""
    text = _CODE_SPAN.sub(lambda m: m[2].strip(), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link counts by its text
    text = re.sub(r"<[^>]+>|\*+", "", text)  # HTML tags, emphasis
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every #anchor that leads somewhere in a Markdown document."""
    text = prose(document.read_text())
    found: set[str] = set(_HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            base = slug(heading[1])
            found.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return found


def links(document: Path) -> list[str]:
    """The link targets of a Markdown document, outside code."""
    text = prose(document.read_text())
    paragraphs = [_CODE_SPAN.sub("", p) for p in re.split(r"\n[ \t]*\n", text)]
    return [t for p in paragraphs for t in _LINK.findall(p) + _REFERENCE.findall(p)]


def broken_links(document: Path) -> list[str]:
    """Each relative link of document that leads nowhere, with the reason."""
    broken = []
    for target in links(document):
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
            continue  # https:, mailto: ... are not checked: the tests use no network
        path, _, anchor = target.partition("#")
        resolved = (document.parent / unquote(path)).resolve() if path else document
        if not resolved.is_relative_to(REPO):
            broken.append(f"{target}: leaves the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not Markdown")
        elif anchor and unquote(anchor) not in anchors(resolved):
            broken.append(f"{target}: no heading makes the anchor #{anchor}")
    return broken


def name(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("document", DOCUMENTS, ids=name)
def test_document_links_and_anchors_resolve(document: Path) -> None:
    assert broken_links(document) == []


@pytest.mark.parametrize("source", CITATION_SOURCES, ids=name)
def test_document_does_not_cite_the_design_notes(source: Path) -> None:
    cited = re.findall(r".*(?:\bDESIGN\b|§).*", source.read_text(errors="replace"))
    assert cited == [], "state the rule or the number itself"


def test_citation_scan_covers_the_code_the_cmake_module_and_the_benchmarks() -> None:
    scanned = {name(path) for path in CITATION_SOURCES}
    assert {
        "qola/base/errors.py",
        "qola/commands/bump.py",
        "cmake/QoLARun.cmake",
        "bench/run.py",
        "CMakeLists.txt",
        "docs/schemas/bump.schema.json",
    } <= scanned


@pytest.mark.parametrize("source", INSTALL_ADVICE, ids=name)
def test_no_document_or_hint_installs_qola_by_a_pypi_name(source: Path) -> None:
    """qola is not on PyPI: a document or a CMake hint says how to install it from a
    checkout or a git URL."""
    advice = [m[0] for m in _PYPI_QOLA.finditer(source.read_text(errors="replace"))]
    assert advice == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("pip install qola", True),
        ('"/usr/bin/python3" -m pip install qola\n', True),
        ("pipx install -U qola`", True),
        ("pip install .", False),
        ('pip install "git+<qola\'s repository URL>@<tag>"', False),
        ("pip install ./3rdparty/qola", False),
        ("pip install qola-tools", False),
        ('requires = ["scikit-build-core", "qola"]', True),
        ('requires = [\n    "setuptools",\n    "qola>=0.1",\n]', True),
        ('requires = ["scikit-build-core", "qola @ git+<URL>@<tag>"]', False),
        ('requires = ["qola @ file:///w/qola-0.1.0-py3-none-any.whl"]', False),
        ('requires = ["qola-tools"]', False),
    ],
)
def test_pypi_name_pattern(text: str, found: bool) -> None:
    assert bool(_PYPI_QOLA.search(text)) is found


@pytest.mark.parametrize("document", DOCUMENTS, ids=name)
def test_every_test_a_document_names_exists(document: Path) -> None:
    missing = [
        f"tests/{file}::{test}"
        for file, test in _CITED_TEST.findall(document.read_text())
        if not (REPO / "tests" / file).is_file()
        or not re.search(rf"^def {test}\(", (REPO / "tests" / file).read_text(), re.M)
    ]
    assert missing == []


def test_readme_exit_codes_are_the_ones_help_lists() -> None:
    """README's table says what the code does: every code --help lists, exit 4 also for a
    folder that is not a repository git accepts (tests/test_broken_repositories.py)."""
    from test_cli import help_exit_codes

    from qola.cli import EXIT_CODES

    section = (REPO / "README.md").read_text().split("## Exit codes", 1)[1].split("\n## ")[0]
    rows = {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.*) \|$",
                                                               section, re.M)}  # fmt: skip
    assert sorted(rows) == sorted(help_exit_codes(EXIT_CODES))
    assert "a folder in the way is not a repository git accepts" in rows[4]


def test_readme_is_a_first_page_of_at_most_200_lines() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 200


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Is every pin still upstream? (scheduled)", "is-every-pin-still-upstream-scheduled"),
        ("GitLab CI, as another user", "gitlab-ci-as-another-user"),
        ("`qola freeze` and `qola init`", "qola-freeze-and-qola-init"),
        ("The shim in the code (`qola/gitrun/shim.py`)", "the-shim-in-the-code-qolagitrunshimpy"),
        ("In a pip / scikit-build-core build", "in-a-pip--scikit-build-core-build"),
        ("What --jobs showed (git 2.39.5)", "what---jobs-showed-git-2395"),
        ("From TE's hand-written snippet to one call", "from-tes-hand-written-snippet-to-one-call"),
        ("**Bold** and [a link](x.md) — with a dash", "bold-and-a-link--with-a-dash"),
    ],
)
def test_slug_follows_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_broken_links_finds_every_kind_of_broken_link(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    (tmp_path / "other.md").write_text("# Other page\n\n## Twice\n\n## Twice\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    document = tmp_path / "page.md"
    document.write_text(
        "# Page\n\n"
        "[fine](other.md) [fine](other.md#other-page) [fine](#page) [fine](other.md#twice-1)\n"
        "[fine](https://example.invalid/x) `[in code](nowhere.md)`\n"
        "```\n[in a fence](nowhere.md)\n```\n"
        "[gone](nowhere.md) [no anchor](other.md#elsewhere) [wrapped\ntext](#nothing)\n"
        "[outside](../outside.md) [not markdown](code.py#x)\n\n"
        "[ref]: missing.md\n"
    )

    assert broken_links(document) == [
        "nowhere.md: no such file",
        "other.md#elsewhere: no heading makes the anchor #elsewhere",
        "#nothing: no heading makes the anchor #nothing",
        "../outside.md: leaves the repository",
        "code.py#x: an anchor into a file that is not Markdown",
        "missing.md: no such file",
    ]
