"""SHA-256 for the no-op's stamps, without importing hashlib where Python has it built in.

hashlib loads OpenSSL when it is imported: about 7 ms on a machine where the whole stamped
no-op takes 70, for a digest the interpreter's own module computes alike.
"""

from __future__ import annotations

try:  # the built-in implementation: _sha2 since Python 3.12, _sha256 before
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found, unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
    except ImportError:  # a Python built without it: hashlib's (OpenSSL's) does the same
        from hashlib import sha256 as _sha256  # type: ignore[assignment, no-redef, unused-ignore]


def sha256_hex(data: bytes) -> str:
    """The SHA-256 digest of data, in hex."""
    digest: str = _sha256(data).hexdigest()
    return digest
