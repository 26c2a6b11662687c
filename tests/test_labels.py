"""The label beside a pin (`tag = "v1.2"`): read, validated, and edited in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from qola.base.errors import ManifestError
from qola.manifest import load
from qola.manifest.edit import LabelPlacementError, set_label
from tests.test_manifest import AITER_URL, PIN, Root, aiter, rejected
from tests.test_manifest import empty_root as empty_root

NEW = "9f1e2aa67f8c26740d2ff3b29471ccba68637198"


def test_tag_is_read_beside_the_pin(empty_root: Root) -> None:
    manifest = empty_root.write(aiter(tag="v1.2.0"))
    [dep] = load(manifest).deps
    assert (dep.tag, dep.pinned_as) == ("v1.2.0", "v1.2.0")
    [bare] = load(empty_root.write(aiter())).deps
    assert (bare.tag, bare.pinned_as) == (None, PIN[:7])


def test_legacy_tag_is_read_beside_the_legacy_pin(empty_root: Root) -> None:
    empty_root.declare_submodules(("aiter", "3rdparty/aiter", AITER_URL))
    manifest = empty_root.write(f'[qola]\naiter_commit = "{PIN}"\naiter_tag = "v0.9"\n'
                                'other_tag = "not ours"\n')  # fmt: skip
    [dep] = load(manifest).deps
    assert dep.tag == "v0.9"


@pytest.mark.parametrize(
    ("tag", "error"),
    [
        ("refs/tags/v1", "deps.aiter.tag: 'refs/tags/v1' is a ref, not a tag's name\n"
                         'hint: write the name alone: tag = "v1"'),
        ("v1..2", "deps.aiter.tag: 'v1..2' is not a tag name git accepts (it holds '..')\n"
                  "hint: give the tag as `git tag` lists it, e.g. v2.1.0"),
        ('v"1', "deps.aiter.tag: 'v\"1' is not a tag name git accepts (it holds a quote or a "
                "backslash)\nhint: give the tag as `git tag` lists it, e.g. v2.1.0"),
        ("-v1", "deps.aiter.tag: '-v1' is not a tag name git accepts (empty, leading '-' or a "
                "control character)\nhint: give the tag as `git tag` lists it, e.g. v2.1.0"),
    ],
    ids=["full-ref", "dots", "quote", "option"],
)
def test_a_bad_tag_is_refused_at_load(empty_root: Root, run_qola, tag: str, error: str) -> None:  # type: ignore[no-untyped-def]
    manifest = empty_root.write(aiter(tag=tag))
    assert rejected(run_qola, manifest, empty_root.path) == f"qola: {manifest}:5: {error}\n"


def _round_trip(before: str, key: str) -> str:
    labelled = set_label(before, key, "v1.0")
    assert set_label(labelled, key, "v1.0") == labelled  # already so: the same text
    assert set_label(set_label(labelled, key, "v2.0"), key, None) == before
    return labelled


def test_a_label_is_written_on_the_line_after_the_pin_and_removed_whole() -> None:
    before = f'[deps.fmt]\nurl = "u"\n  commit   =  "{PIN}"  # 11.0.2\npath = "p"\n'
    assert _round_trip(before, "deps.fmt.commit") == (
        f'[deps.fmt]\nurl = "u"\n  commit   =  "{PIN}"  # 11.0.2\n  tag   =  "v1.0"\npath = "p"\n'
    )


def test_a_label_keeps_crlf_and_a_missing_final_newline() -> None:
    before = f'[qola]\r\nnamespace = "te"\r\naiter_commit = "{PIN}"'
    assert _round_trip(before, "qola.aiter_commit") == (
        f'[qola]\r\nnamespace = "te"\r\naiter_commit = "{PIN}"\r\naiter_tag = "v1.0"'
    )


def test_a_label_in_dotted_and_inline_forms() -> None:
    dotted = f'[deps]\nfmt.commit = "{PIN}"\nfmt.url = "u"\n'
    assert _round_trip(dotted, "deps.fmt.commit").splitlines()[2] == 'fmt.tag = "v1.0"'
    inline = f'[deps]\nfmt = {{ url = "u", commit = "{PIN}" }}\n'
    assert set_label(inline, "deps.fmt.commit", "v1.0") == (
        f'[deps]\nfmt = {{ url = "u", commit = "{PIN}", tag = "v1.0" }}\n'
    )


def test_a_label_in_an_inline_table_is_removed_as_it_was_written() -> None:
    written = f'[deps]\nfmt = {{ url = "u", commit = "{PIN}", tag = "v1.0" }}  # fmt\n'
    assert set_label(written, "deps.fmt.commit", None) == (
        f'[deps]\nfmt = {{ url = "u", commit = "{PIN}" }}  # fmt\n'
    )
    first = f'[deps]\nfmt = {{tag = "v1.0", commit = "{PIN}"}}\n'
    assert set_label(first, "deps.fmt.commit", None) == f'[deps]\nfmt = {{commit = "{PIN}"}}\n'
    assert set_label(written, "deps.fmt.commit", "v2") == written.replace("v1.0", "v2")


def test_a_label_sharing_a_line_is_not_removed_by_guess() -> None:
    """A key spelt as qola never writes it (quoted) in an inline table: refused."""
    quoted = f'[deps]\nfmt = {{ commit = "{PIN}", "tag" = "v1.0" }}\n'
    with pytest.raises(LabelPlacementError) as caught:
        set_label(quoted, "deps.fmt.commit", None)
    assert "cannot remove it alone" in str(caught.value.problem)


def test_a_label_qola_cannot_write_is_refused() -> None:
    with pytest.raises(ManifestError):
        set_label(f'[deps.fmt]\ncommit = "{PIN}"\n', "deps.fmt.commit", 'v"1')


def test_an_edited_manifest_with_a_label_loads(empty_root: Root, tmp_path: Path) -> None:
    manifest = empty_root.write(aiter())
    manifest.write_text(set_label(manifest.read_text(), "deps.aiter.commit", "v3.1"))
    assert load(manifest).deps[0].tag == "v3.1"
