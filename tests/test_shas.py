"""The one test of a full SHA (qola/base/shas.py) that every module asks."""

from qola.base.shas import is_full_sha

SHA1 = "0123456789abcdef0123456789abcdef01234567"
SHA256 = SHA1 + "89abcdef0123456789abcdef"


def test_a_full_sha_is_40_or_64_lower_case_hex_digits():
    assert is_full_sha(SHA1) and is_full_sha(SHA256)


def test_nothing_else_is_one():
    # "$" with match would take the trailing newline: fullmatch does not.
    for text in (SHA1 + "\n", " " + SHA1, SHA1.upper(), SHA1[:-1], SHA1 + "8", SHA256[:-1],
                 SHA256 + "0", "", SHA1[:7], SHA1.replace("0", "g")):  # fmt: skip
        assert not is_full_sha(text), text
