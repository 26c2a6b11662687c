"""Git queries, each spelled out once and named after what it returns.

Every caller that asks git a question about commits, refs or a remote asks it
here, so that the options that make an answer trustworthy (`--verify`,
`--end-of-options` before a value that may come from a manifest, `^{commit}` to
peel a tag) are chosen in one place. Writing commands stay with their callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base.shas import is_full_sha
from qola.repo import gitfiles, store

if TYPE_CHECKING:  # qola.gitrun.git is imported only where git runs: not on the no-op path
    from qola.gitrun.git import Runner

# One commit per record: full SHA, committer time (seconds), author name, author email,
# author date (ISO 8601), parents, subject (last: the one field that could hold anything else).
_LOG_FORMAT = "%H%x00%ct%x00%an%x00%ae%x00%aI%x00%P%x00%s"


@dataclass(frozen=True)
class Commit:
    """A commit as people read it in a log."""

    sha: str
    time: int  # committer date, seconds since the epoch: when it landed where it is
    author: str
    subject: str
    email: str = ""  # the author's
    date: str = ""  # the author date, ISO 8601 with its offset
    parents: tuple[str, ...] = ()  # first parent first (none shown past a shallow boundary)


def commit_sha(runner: Runner, repo: Path, rev: str) -> str | None:
    """The full SHA of the commit rev names (a tag is peeled); None when there is none."""
    out = runner.run(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}",
                     check=False)  # fmt: skip
    sha = out.stdout.strip()
    return sha if out.status == 0 and sha else None


def local_tag(runner: Runner, repo: Path, name: str) -> str | None:
    """What the repository's own tag refs/tags/name names, annotated tags peeled (a commit,
    or the tree or blob a tag may name); None when it has no such tag."""
    out = runner.run(repo, "rev-parse", "--verify", "-q", "--end-of-options",
                     f"refs/tags/{name}^{{}}", check=False)  # fmt: skip
    sha = out.stdout.strip()
    return sha if out.status == 0 and sha else None


def head_sha(runner: Runner, worktree: Path) -> str | None:
    """HEAD's commit as git says (for HEADs the files alone cannot answer)."""
    return commit_sha(runner, worktree, "HEAD")


def has_commit(runner: Runner, repo: Path, sha: str) -> bool:
    """True when the commit is in the repository's object store."""
    out = runner.run(repo, "cat-file", "-e", "--end-of-options", f"{sha}^{{commit}}", check=False)
    return out.status == 0


def has_checkout(runner: Runner, repo: Path, sha: str) -> bool:
    """True when the commit and every tree and file of it are in the object store: what a
    checkout of it needs. A fetch cut short (a kill, a dropped connection, a full disk
    while git unpacks) can leave the commit without all of its files; git 2.39 then
    checks it out with exit 0 and the files missing. Objects a partial clone's promisor
    remote owes are allowed (checkout fetches them); nothing is fetched to answer."""
    out = runner.run(repo, "rev-list", "--objects", "--no-walk", "--missing=allow-promisor",
                     "--quiet", "--end-of-options", f"{sha}^{{commit}}", check=False)  # fmt: skip
    return out.status == 0


def is_ancestor(runner: Runner, repo: Path, old: str, new: str) -> bool:
    """True when old is new or in new's history (both must be present to say yes)."""
    out = runner.run(repo, "merge-base", "--is-ancestor", "--end-of-options", old, new,
                     check=False)  # fmt: skip
    return out.status == 0


def ahead_behind(runner: Runner, repo: Path, base: str, rev: str) -> tuple[int, int] | None:
    """(commits of rev not in base, commits of base not in rev), as git counts them; None
    when git cannot (a commit is missing, or a shallow history cuts the walk short)."""
    out = runner.run(repo, "rev-list", "--left-right", "--count", "--end-of-options",
                     f"{rev}...{base}", check=False)  # fmt: skip
    found = out.stdout.split()
    if out.status != 0 or len(found) != 2 or not all(n.isdigit() for n in found):
        return None
    return int(found[0]), int(found[1])


def only_here(
    runner: Runner,
    repo: Path,
    rev: str = "HEAD",
    kept: tuple[str, ...] = (),
    upstream: bool = False,
    limit: int | None = None,
) -> list[tuple[str, str]] | None:
    """(SHA, subject) of the commits in rev's history that only this repository has, newest
    first (at most limit); None when git cannot tell.

    Never only here: the commits in kept, and those git fetched with a depth (the `shallow`
    file: a commit made here always has its parents). Nor, asked what moving would lose,
    anything a branch, a tag, a remote-tracking ref or a ref of qola's holds (among them
    refs/qola/pins/<sha>, every commit qola checked out here); asked what may be missing
    upstream (upstream=True), only what remote-tracking refs, tags and qola's pins hold: a
    local branch or a backup is no more on the remote than a detached commit.
    """
    if rev != "HEAD" and not is_full_sha(rev):
        return None
    gitdir = gitfiles.git_dir(repo)
    # Not FETCH_HEAD: it names whatever a fetch was asked for, a commit of one's own too
    # (`git fetch origin <sha>` of a local commit succeeds without fetching, `git fetch .`).
    fetched = gitfiles.shallow_commits(gitdir) if gitdir is not None else []
    if upstream:
        refs = ["--remotes", "--tags", f"--glob={store.PINS_PREFIX}*"]
    else:
        refs = ["--branches", "--tags", "--remotes", f"--glob={store.QOLA_REFS}/*"]
    # No --end-of-options: it would make --not a revision. rev is HEAD or a full SHA.
    out = runner.run(
        repo, "log", "--ignore-missing",  # an upstream commit this repository never had
        "--format=%H %s", *([f"-{limit}"] if limit else []), rev, "--not", *refs,
        *[sha for sha in kept if is_full_sha(sha)], *fetched, "--", check=False,
    )  # fmt: skip
    if out.status != 0:
        return None
    found = []
    for line in out.stdout.splitlines():
        sha, _, subject = line.partition(" ")
        if sha:
            found.append((sha, subject))
    return found


def commit_time(runner: Runner, repo: Path, rev: str) -> int | None:
    """The committer date of rev in seconds; None when the repository lacks it."""
    out = runner.run(repo, "--no-optional-locks", "log", "-1", "--format=%ct",
                     "--end-of-options", f"{rev}^{{commit}}", "--", check=False)  # fmt: skip
    text = out.stdout.strip()
    return int(text) if out.status == 0 and text.isdigit() else None


def commits(
    runner: Runner, repo: Path, tip: str, *excluded: str, subject: str = ""
) -> list[Commit]:
    """The commits in tip's history and in none of excluded's, newest first."""
    args = ["--no-optional-locks", "log", f"--format={_LOG_FORMAT}", "--end-of-options", tip,
            *(f"^{sha}" for sha in excluded), "--"]  # fmt: skip
    return _parse_log(runner.run(repo, *args, subject=subject or str(repo)).stdout)


def _parse_log(text: str) -> list[Commit]:
    found = []
    for line in text.splitlines():
        fields = [*line.split("\0", 6), "", "", "", "", "", ""][:7]
        sha, when, author, email, date, parents, subject = fields
        if is_full_sha(sha):
            time = int(when) if when.isdigit() else 0
            found.append(Commit(sha, time, author, subject, email, date, tuple(parents.split())))
    return found


def commit(runner: Runner, repo: Path, rev: str) -> Commit | None:
    """The commit rev names, as a log shows it; None when the repository lacks it."""
    out = runner.run(repo, "--no-optional-locks", "log", "-1", "--no-walk",
                     f"--format={_LOG_FORMAT}", "--end-of-options", f"{rev}^{{commit}}", "--",
                     check=False)  # fmt: skip
    found = _parse_log(out.stdout) if out.status == 0 else []
    return found[0] if found else None


def blob_at(runner: Runner, repo: Path, rev: str, path: str) -> str | None:
    """The text of the file at path in rev (`rev:path`; rev "" is the index); None if absent."""
    out = runner.run(repo, "cat-file", "blob", "--end-of-options", f"{rev}:{path}", check=False)
    return out.stdout if out.status == 0 else None


def top_files(runner: Runner, repo: Path, rev: str) -> dict[str, int] | None:
    """{name: size in bytes} of the regular files at the top of rev's tree (no link, no
    folder, no submodule); None when the repository lacks rev."""
    out = runner.run(repo, "ls-tree", "-z", "-l", "--end-of-options", f"{rev}^{{tree}}",
                     check=False)  # fmt: skip
    if out.status != 0:
        return None
    found = {}
    for record in out.stdout.split("\0"):
        meta, _, name = record.partition("\t")
        fields = meta.split()
        if len(fields) == 4 and fields[0] in ("100644", "100755") and fields[3].isdigit():
            found[name] = int(fields[3])
    return found


def tree_gitlink(runner: Runner, repo: Path, rev: str, path: str) -> str | None:
    """The commit rev's tree records at path when it is a submodule (a gitlink)."""
    out = runner.run(repo, "--literal-pathspecs", "ls-tree", "-z", "--end-of-options", rev, "--",
                     path, check=False)  # fmt: skip
    for record in out.stdout.split("\0"):
        meta, _, name = record.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[0] == "160000" and name == path:
            return fields[2]
    return None


def index_gitlinks(
    runner: Runner,
    root: Path,
    paths: tuple[str, ...] | list[str] = (),
    env: Mapping[str, str] | None = None,
) -> dict[str, str | None]:
    """The gitlinks a repository's index records (at paths, or all): SHA, or None when
    conflicted, as git reads them. env may name another index (GIT_INDEX_FILE: the one a
    commit hook is given). gitindex.gitlinks reads the same from the file, without git."""
    out = runner.run(
        root, "--literal-pathspecs", "ls-files", "-s", "-z", "--", *paths, check=False, env=env
    )
    links: dict[str, str | None] = {}
    for record in out.stdout.split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) >= 3 and fields[0] == "160000":
            links[path] = fields[1] if fields[2] == "0" and path not in links else None
    return links


def tracked_files(runner: Runner, top: Path) -> list[str] | None:
    """Every file (not gitlink) the index of the repository at top tracks, relative to top,
    once each (a conflicted one has an entry per merge stage); None when git cannot read it."""
    out = runner.run(top, "ls-files", "-s", "-z", check=False)
    if out.status != 0:
        return None
    found: dict[str, None] = {}
    for record in out.stdout.split("\0"):
        meta, _, path = record.partition("\t")
        if path and not meta.startswith("160000 "):
            found[path] = None
    return list(found)


def root_gitlinks(runner: Runner, root: Path, paths: list[str]) -> dict[str, str | None]:
    """The gitlinks the root's index records at paths ({} when the root is in no repository),
    asked of git in one call.

    Not read from the index file (gitindex.gitlinks), though it could be: verify reports a
    root git refuses to read, and the commands that write in the root (bump, freeze) must
    meet git's refusal before their first write. Only the CMake warning, which may say
    nothing rather than run git, reads the file first (pin_gitlinks.py)."""
    if gitfiles.git_dir(root) is None or not paths:
        return {}
    return index_gitlinks(runner, root, paths)


def default_branch(runner: Runner, where: Path, subject: str, url: str) -> str | None:
    """The commit the remote's HEAD (its default branch) points at; None when it has none."""
    out = runner.run(where, "ls-remote", "--symref", "--end-of-options", url, "HEAD",
                     check=False, network=True)  # fmt: skip
    if out.status != 0:
        from qola.gitrun.git import command_error  # lazy: only where git runs

        raise command_error(subject, ["ls-remote", url], out)
    for line in out.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name == "HEAD" and is_full_sha(sha):
            return sha
    return None


def advertised(runner: Runner, where: Path, url: str, at_most: float) -> set[str] | None:
    """The commits the remote at url advertises as the tips of its refs (`refs/...`,
    annotated tags peeled; never its HEAD, which for a repository of one's own may be
    a commit nothing keeps); None when it cannot be asked within at_most seconds."""
    out = runner.run(where, "ls-remote", "--end-of-options", url, check=False, network=True,
                     at_most=at_most)  # fmt: skip
    if out.status != 0:
        return None
    tips = set()
    for line in out.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name.startswith("refs/") and is_full_sha(sha):
            tips.add(sha)
    return tips


def remote_refs(
    runner: Runner, where: Path, subject: str, url: str, patterns: list[str]
) -> dict[str, str]:
    """{ref name: commit SHA} of the remote's refs matching patterns (one `git ls-remote`):
    an annotated tag is peeled to its commit. `where` is the folder git runs in (no
    repository is needed)."""
    # git lists a tag's peeled line (`refs/tags/v1^{}`) only where a pattern matches it:
    # `refs/tags/*` does, `refs/tags/v1` or `v1` does not, so each name is asked peeled too.
    asked = [*patterns, *(f"{p}^{{}}" for p in patterns if "*" not in p and p != "HEAD")]
    out = runner.run(where, "ls-remote", "--end-of-options", url, *asked, check=False,
                     network=True)  # fmt: skip
    if out.status != 0:
        from qola.gitrun.git import command_error  # lazy: only where git runs

        raise command_error(subject, ["ls-remote", url, *patterns], out)
    refs: dict[str, str] = {}
    peeled: dict[str, str] = {}
    for line in out.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if not is_full_sha(sha):
            continue
        if name.endswith("^{}"):
            peeled[name.removesuffix("^{}")] = sha
        else:
            refs[name] = sha
    return {**refs, **peeled}


def local_tags(runner: Runner, repo: Path) -> dict[str, str]:
    """{refs/tags/NAME: commit} of the repository's own tags, annotated ones peeled (a tag
    of a tag to its commit too: for-each-ref peels one level)."""
    out = runner.run(repo, "for-each-ref",
                     "--format=%(refname)%00%(objectname)%00%(*objectname)%00%(*objecttype)",
                     "refs/tags", check=False)  # fmt: skip
    found = {}
    for line in out.stdout.splitlines() if out.status == 0 else ():
        name, sha, peeled, kind = [*line.split("\0"), "", "", ""][:4]
        if kind == "tag":  # rare: one more git call each
            peeled = local_tag(runner, repo, name.removeprefix("refs/tags/")) or ""
        found[name] = peeled or sha
    return found


def pick_ref(refs: dict[str, str], ref: str) -> tuple[str, str] | None:
    """(full ref name, commit) that ref names among refs: a tag wins over a branch of the
    same name; None when it names none."""
    for name in (f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
        if name in refs:
            return name, refs[name]
    return None


def remote_ref(
    runner: Runner, where: Path, subject: str, url: str, ref: str
) -> tuple[str, str] | None:
    """(full ref name, commit SHA) of a branch or tag of the remote at url; None if it has none.

    A tag wins over a branch of the same name, and an annotated tag is peeled to its
    commit. `where` is the folder git runs in (no repository is needed).
    """
    return pick_ref(remote_refs(runner, where, subject, url, [ref]), ref)


def remote_branches_and_tags(
    runner: Runner, where: Path, subject: str, url: str
) -> dict[str, str]:
    """Every branch and tag of the remote at url, as ls-remote lists them: full ref name to
    SHA, an annotated tag twice (`refs/tags/T`, its object, and `refs/tags/T^{}`, the
    commit it peels to). Nothing else it advertises (a host's refs/pull/*) is asked for."""
    out = runner.run(where, "ls-remote", "--heads", "--tags", "--end-of-options", url,
                     check=False, network=True)  # fmt: skip
    if out.status != 0:
        from qola.gitrun.git import command_error  # lazy: only where git runs

        raise command_error(subject, ["ls-remote", "--heads", "--tags", url], out)
    refs: dict[str, str] = {}
    for line in out.stdout.splitlines():
        sha, _, name = line.partition("\t")
        if name.startswith(("refs/heads/", "refs/tags/")) and is_full_sha(sha):
            refs[name] = sha
    return refs


def is_ignored(runner: Runner, repo: Path, subject: str, folder: str) -> bool:
    """Whether the repository's ignore rules (.gitignore files, info/exclude,
    core.excludesFile) ignore the folder (a path relative to its top; it need not exist),
    or a folder above it."""
    out = runner.run(repo, "check-ignore", "-q", "--", f"{folder}/", check=False)
    if out.status not in (0, 1):
        from qola.gitrun.git import command_error  # lazy: only where git runs

        raise command_error(subject, ["check-ignore", "-q", "--", f"{folder}/"], out)
    return out.status == 0
