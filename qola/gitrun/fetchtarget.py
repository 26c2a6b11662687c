"""Where a fetch goes and how it is secured: decided by the manifest and the user's own
config, never by a repository's.

A repository's config can send git's (and git-lfs's) requests elsewhere or weaken how
they are secured: its own proxy, `http.sslVerify = false`, a resolve list sending a host
name to another address, a CA file of its own, a `url.<base>.insteadOf` rewriting the
manifest's URL, an LFS endpoint. The user's credential helpers would answer each with the
user's token. Pure functions of config entries, as git listed them (qola/gitrun/config_listing.py);
the keys are git-config(1)'s (2.39) and git-lfs-config(5)'s (3.3).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from qola.gitrun.overrides import Role, UnsafeConfigError, config_command, unset_command
from qola.repo.configfile import Entry

# http[.<url>].<key> (git's http.c, which git-lfs reads too), overridden with the user's
# value (for that URL, else their general one), else with git's default.
_HTTP = {
    "proxy": "",  # http.c: an empty proxy disables proxying
    "sslverify": "true",
    "sslversion": "",  # http.c: an empty version is libcurl's default
    "followredirects": "initial",
    "delegation": "none",  # no GSSAPI credential delegation (libcurl's default)
}
# Lists: an empty value resets them (http.c), then the user's own go back on, in order.
_HTTP_LISTS = frozenset({"curloptresolve"})
# Files (or choices) that have no value meaning "git's default": refused where git may
# make a request, unless the user's own config gives the same.
_HTTP_REFUSED = frozenset({
    "sslcainfo", "sslcapath", "sslcert", "sslkey", "pinnedpubkey", "proxysslcert",
    "proxysslkey", "proxysslcainfo", "sslbackend",
})  # fmt: skip
# remote.<name>.<key>: the remote's own proxy; git-lfs's endpoints for it.
_REMOTE = {"proxy": "", "lfsurl": "", "lfspushurl": ""}
# lfs.<key>: git-lfs's endpoints ("" is no endpoint: the transfer fails), and its use of
# url.<base>.insteadOf for the URLs a server gives.
_LFS = {"url": "", "pushurl": "", "transfer.enablehrefrewrite": "false",
        # Where git-lfs (run as whoever runs qola) writes its objects, logs and temporary
        # files: empty is its default, `lfs` in the git dir.
        "storage": "",
        # Which remote's URL gives the endpoint: never every remote, nor one guessed from
        # the commit; remote.lfsdefault below is git-lfs's own fallback, origin.
        "remote.searchall": "false", "remote.autodetect": "false"}
_LFS_REMOTE = {"lfsdefault": "origin", "lfspushdefault": "origin"}


def settings(local: Iterable[Entry], user: Sequence[Entry]) -> tuple[list[tuple[str, str]],
                                                                       dict[str, str]]:  # fmt: skip
    """(key, value) settings giving back the user's (or git's) transport settings for
    each one local sets, and variables for the environment."""
    pairs: dict[str, str] = {}
    lists: dict[str, None] = {}
    extra: dict[str, str] = {}
    for entry in local:
        section, sub, key = entry.section, entry.subsection, entry.key
        if section == "http" and key in _HTTP_LISTS:
            lists[entry.name] = None
        elif section == "http" and key in _HTTP:
            pairs[entry.name] = _users_http(user, entry, _HTTP[key])
        elif section == "http" and key == "sslcipherlist":
            # GIT_SSL_CIPHER_LIST wins over the config; empty, it is libcurl's default.
            mine = _users_http(user, entry, "")
            extra["GIT_SSL_CIPHER_LIST"] = os.environ.get("GIT_SSL_CIPHER_LIST", mine)
        elif section == "remote" and sub is not None and key in _REMOTE:
            pairs[entry.name] = _exact(user, entry, _REMOTE[key])
        elif section == "remote" and sub is None and key in _LFS_REMOTE:
            pairs[entry.name] = _exact(user, entry, _LFS_REMOTE[key])
        elif section == "lfs" and _lfs_key(entry) in _LFS:
            pairs[entry.name] = _exact(user, entry, _LFS[_lfs_key(entry)])
        elif (section, sub, key) == ("protocol", None, "version"):
            # qola asks for a commit by SHA, which a protocol v2 server sends whatever it
            # is; v0 makes it search branches (fetching.py): the user's choice, not the
            # repository's. 2 is git's default (2.26 and later).
            pairs[entry.name] = _exact(user, entry, "2")
    found = list(pairs.items())
    for name in lists:
        found.append((name, ""))
        found += [(name, e.text) for e in user if e.name.lower() == name.lower()]
    return found, extra


def _lfs_key(entry: Entry) -> str:
    return f"{entry.subsection.lower()}.{entry.key}" if entry.subsection else entry.key


def _exact(user: Sequence[Entry], entry: Entry, default: str) -> str:
    found = default
    for mine in user:
        if (mine.section, mine.subsection, mine.key) == (entry.section, entry.subsection,
                                                          entry.key):  # fmt: skip
            found = mine.text
    return found


def _users_http(user: Sequence[Entry], entry: Entry, default: str) -> str:
    """The user's value for an http key: for the same URL, else their general one."""
    general = _exact(user, entry._replace(subsection=None), default)
    return _exact(user, entry, general)


def refusal(local: Sequence[Entry], user: Sequence[Entry], url: str | None, cwd: str,
            role: Role, lfs: bool) -> None:  # fmt: skip
    """Raise UnsafeConfigError for what a repository's config says of a request git (or
    git-lfs, with the user's LFS filter) may make here that no command line can override:
    a file or choice securing the connection; an insteadOf sending url elsewhere."""
    requests = role.online and (role.anything or (role.here and (role.fetches or lfs)))
    if not requests:
        return
    for entry in local:
        if entry.section == "http" and entry.key in _HTTP_REFUSED:
            mine = _users_http(user, entry, "\0")
            if mine != entry.text:
                raise UnsafeConfigError(
                    cwd,
                    f"{entry.origin} sets {entry.name} = {entry.text!r}, which decides how "
                    "git's requests are secured; qola lets only the manifest and your own "
                    "config decide that, and git has no value meaning its own default",
                    f"if you trust it, set it in your own config, or remove it "
                    f"({unset_command(entry)}), and run again",
                )
    if url is not None:
        _check_rewrite(local, user, url, cwd)


def rewrite(url: str, entries: Iterable[Entry]) -> tuple[str, Entry | None]:
    """url as git rewrites it with the url.<base>.insteadOf of entries (remote.c: the
    longest match, the first of equal ones), and the entry that did it."""
    best: Entry | None = None
    for entry in entries:
        if (entry.section == "url" and entry.subsection is not None and entry.key == "insteadof"
                and entry.text and url.startswith(entry.text)
                and (best is None or len(entry.text) > len(best.text))):  # fmt: skip
            best = entry
    if best is None or best.subsection is None:
        return url, None
    return best.subsection + url[len(best.text):], best


def _check_rewrite(local: Sequence[Entry], user: Sequence[Entry], url: str, cwd: str) -> None:
    theirs, entry = rewrite(url, [*user, *local])
    mine, _ = rewrite(url, user)
    if theirs != mine and entry is not None:
        raise UnsafeConfigError(
            cwd,
            f"{entry.origin} sets {entry.name} = {entry.text!r}, which sends git's requests "
            f"for {url} to {theirs}; where a fetch goes is the manifest's and your own "
            "config's to say, and git lets no command line unset this",
            f"if you trust it, put the mirror in your own config, or remove it "
            f"({unset_command(entry)}), and run again",
        )


def target(args: Sequence[str], local: Sequence[Entry], user: Sequence[Entry]) -> str | None:
    """The URL a fetch or ls-remote of qola's goes to: the word after --end-of-options,
    or the first URL of the remote it names (git reads the user's config first)."""
    words = list(args)
    if "--end-of-options" not in words:
        return None
    at = words.index("--end-of-options") + 1
    if at >= len(words):
        return None
    word = words[at]
    if ":" in word or "/" in word or word.startswith("."):
        return word
    urls = [e.text for e in [*user, *local]
            if (e.section, e.subsection, e.key) == ("remote", word, "url")]  # fmt: skip
    return urls[0] if urls else None


def lfs_filter(user: Sequence[Entry]) -> bool:
    """Whether the user's config runs git-lfs as a filter (so git-lfs may make requests)."""
    return any(e.section == "filter" and e.subsection == "lfs" for e in user)


def promisor_refusal(local: Sequence[Entry], user: Sequence[Entry], sources: set[str],
                     cwd: str) -> None:  # fmt: skip
    """Raise UnsafeConfigError where the repository is a partial clone whose promisor
    remote (which git fetches missing objects from, lazily, in any command) is not a URL
    qola fetches from, or is one its own insteadOf rewrites."""
    named = [e.text for e in local if (e.section, e.subsection, e.key)
             == ("extensions", None, "partialclone")]  # fmt: skip
    named += [e.subsection for e in local if e.section == "remote" and e.key == "promisor"
              and e.subsection is not None and e.text.lower() in ("true", "yes", "on", "1", "")]
    for name in dict.fromkeys(named):
        urls = [e for e in [*user, *local]
                if (e.section, e.subsection, e.key) == ("remote", name, "url")]  # fmt: skip
        for entry in urls[:1]:  # git fetches from the first (your own config's come first)
            if entry.text not in sources and entry not in user:
                raise UnsafeConfigError(
                    cwd,
                    f"{entry.origin} makes this a partial clone whose promisor remote "
                    f"{name!r} is {entry.text}, which no manifest URL names; git would fetch "
                    "every missing object from it, with your credentials",
                    "if you trust it, name it in the manifest, or make the manifest's URL its "
                    f"only one ({config_command(entry, '--replace-all', entry.name)} URL), "
                    "and run again",
                )
            _check_rewrite(local, user, entry.text, cwd)


def lfs_refusal(local: Sequence[Entry], user: Sequence[Entry], sources: set[str],
                cwd: str) -> None:  # fmt: skip
    """Raise UnsafeConfigError where git-lfs (the user's filter), smudging a file, would take
    its endpoint (and send the user's credentials there) from a remote URL of the
    repository's that no manifest names: git-lfs derives it from the LAST URL of the
    remote of the branch, else of remote.lfsDefault, else of the only remote, else origin."""
    if any(e.name == "lfs.url" for e in user):
        return  # the user's own endpoint, for every repository
    remotes = dict.fromkeys(e.subsection for e in [*user, *local]
                            if e.section == "remote" and e.key == "url" and e.subsection)
    named = [e.text for e in [*user, *local] if e.section == "branch" and e.key == "remote"]
    named += [e.text for e in user if e.name == "remote.lfsdefault"]
    named += ["origin", *(list(remotes) if len(remotes) == 1 else [])]
    for name in dict.fromkeys(named):
        if any((e.section, e.subsection, e.key) == ("remote", name, "lfsurl")
               for e in [*user, *local]):  # fmt: skip
            continue  # the user's endpoint, or the repository's, emptied: none
        urls = [e for e in [*user, *local]
                if (e.section, e.subsection, e.key) == ("remote", name, "url")]  # fmt: skip
        for entry in urls:
            if entry.text not in sources and entry not in user:
                command = config_command(entry, "--replace-all", entry.name)
                raise UnsafeConfigError(
                    cwd,
                    f"{entry.origin} sets {entry.name} = {entry.text!r}, which no manifest "
                    "URL names; git-lfs, which your filter.lfs runs, would send its requests "
                    "for this repository's LFS files there, with your credentials",
                    "if you trust it, set lfs.url in your own config, or make the manifest's "
                    f"URL the remote's only one ({command} URL), and run again",
                )
            _check_rewrite(local, user, entry.text, cwd)
