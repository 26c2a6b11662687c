"""A repository's URL as git spells it: its form (scheme, scp-like, local path), and the
same URL fit to be written where others read it, without the credentials it may carry.

What is removed, and why: docs/sbom.md, "Credentials"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import NamedTuple
from urllib.parse import quote, urlsplit, urlunsplit

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
SCP_LIKE = re.compile(r"^(?:[^@/\s]+@)?[^/:\s]+:(?!//)")
# Where the part before '@' is a login (ssh's user), not a secret: it is kept, its password not.
_LOGIN_SCHEMES = ("ssh", "git+ssh", "ssh+git")
_SCP = re.compile(r"^(?:([^@/\s]+)@)?([^/:\s]+):(.*)$", re.S)
# In a text: what has the shape of a URL (scheme://...), up to a space or a quote.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"`<>]+")
# Punctuation a URL in a sentence is followed by, not part of it.
_TRAILING = ".,;:!)]}"
# In a text: an scp-like user:password@host:path.
_SCP_SECRET_IN_TEXT = re.compile(
    r"(?<![^\s'\"`(=])([^\s@/:'\"`]+):[^\s@/'\"`]+@([^\s/:'\"`]+):(?!//)"
)


class Place(NamedTuple):
    """Where a URL points: its host (lower-cased; "" for a local path) and its path on it."""

    host: str
    path: str  # without leading or trailing slashes


def is_local(url: str) -> bool:
    """A local path, or a file:// URL (no host to name)."""
    return (not SCHEME.match(url) and not SCP_LIKE.match(url)) or url.lower().startswith("file:")


def without_credentials(url: str) -> str:
    """url without what would let its reader in: the user and password of an http(s), ftp
    or git URL (a token is often the user: https://<token>@host/...), and its query; the
    password, never the login, of an ssh URL. A local path is returned as it is."""
    scheme = SCHEME.match(url)
    if scheme is None:
        found = _SCP.match(url) if SCP_LIKE.match(url) else None
        if found and found[1] and ":" in found[1]:
            return f"{found[1].split(':', 1)[0]}@{found[2]}:{found[3]}"
        return url
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if scheme[1].lower() in _LOGIN_SCHEMES:
        login = parts.netloc.rpartition("@")[0].split(":", 1)[0]
        netloc = f"{login}@{netloc}" if login else netloc
    elif scheme[1].lower() != "file":
        query = ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _stripped_or_cut(url: str) -> str:
    """without_credentials(url), for a URL-shaped text that may not parse as one: then
    everything before an '@' of its authority, and its query, cut."""
    try:
        return without_credentials(url)
    except ValueError:  # urlsplit: an authority it refuses ("Invalid IPv6 URL")
        cut = re.sub(r"^([^:]+://)[^/?#]*@", r"\1", url)
        return cut.partition("?")[0]


def scp_scrubbed(text: str) -> str:
    """text with the password of each scp-like `user:password@host:path` in it cut."""
    return _SCP_SECRET_IN_TEXT.sub(r"\1@\2:", text)


def scrubbed(text: str, known: Iterable[str] = ()) -> str:
    """text (a message, to be written where others read it) with each URL in it written
    without credentials: each of known as it is spelled, then whatever has the shape of
    one: scheme://user:password@host/...?query, and scp-like user:password@host:path."""
    for url in sorted({url for url in known if url}, key=len, reverse=True):
        text = text.replace(url, _stripped_or_cut(url))

    def stripped(found: re.Match[str]) -> str:
        url = found[0]
        body = url.rstrip(_TRAILING)
        return _stripped_or_cut(body) + url[len(body):]

    text = _URL_IN_TEXT.sub(stripped, text)
    return _SCP_SECRET_IN_TEXT.sub(r"\1@\2:", text)


def as_uri(url: str) -> str:
    """url as a URI a reader of another tool can parse: without credentials, an scp-like
    `user@host:path` as ssh://user@host/path, a local path as a file:// URL."""
    url = without_credentials(url)
    if SCHEME.match(url):
        return url
    found = _SCP.match(url) if SCP_LIKE.match(url) else None
    if found:
        login = f"{found[1]}@" if found[1] else ""
        return f"ssh://{login}{found[2]}/{found[3].lstrip('/')}"
    local = PurePosixPath(url)
    return local.as_uri() if local.is_absolute() else quote(url)


def place(url: str) -> Place:
    """The host and path of url (an scp-like one's too); host "" for a local path."""
    found = None if SCHEME.match(url) else (_SCP.match(url) if SCP_LIKE.match(url) else None)
    if found:
        return Place(found[2].lower(), found[3].strip("/"))
    if is_local(url):
        return Place("", urlsplit(url).path.strip("/") if SCHEME.match(url) else url.strip("/"))
    parts = urlsplit(url)
    return Place((parts.hostname or "").lower(), parts.path.strip("/"))


def repository_name(url: str) -> str | None:
    """The name the URL's last path part gives the repository (`aiter` for .../aiter.git)."""
    last = place(url).path.rstrip("/").rpartition("/")[2]
    name = last.removesuffix(".git") if last != ".git" else ""
    return name or None
