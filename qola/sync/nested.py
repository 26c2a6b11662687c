"""Nested submodules, each brought to the gitlink its parent's commit records.

The layout `git submodule update --init --recursive` makes, each gitlink fetched by SHA
one commit deep; an empty folder is populated in an order a kill leaves repairable
(docs/submodules.md, "Nested submodules brought to their gitlinks").
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qola.base import console, hints, safetext
from qola.base.errors import GitError, QolaError, RefusedError
from qola.base.hints import Hint
from qola.gitrun.queries import has_checkout, head_sha
from qola.manifest.gitmodules import relative_url
from qola.repo import configfile, gitfiles, store
from qola.sync import complete, fetch, mirrors, submodules, unfinished
from qola.sync import ignored as found_ways  # nested.ways() is this module's own
from qola.sync.complete import IncompleteError, listed
from qola.sync.ignored import Way
from qola.sync.local_work import half_made_changes
from qola.sync.observe import Gitlink, gitlinks
from qola.sync.refs import keep_pin

if TYPE_CHECKING:
    from qola.gitrun.git import Runner


@dataclass
class Context:
    """One dependency's nested update: how to fetch, and what happened."""

    runner: Runner
    subject: str  # the dependency's name
    dep_path: str  # the dependency's path, for messages
    offline: bool = False
    cache: Path | None = None
    at_target: frozenset[str] = frozenset()  # nested paths already where they belong
    # Nested paths fetched ahead (prefetch): the error, or None when it went well.
    prefetched: dict[str, QolaError | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    hints: list[str | Hint] = field(default_factory=list)
    brought: int = 0  # nested submodules checked out at their gitlinks (update)
    force: bool = False  # save what is in a checkout's way (--force) instead of refusing
    # What the failures were: a checkout git left unfinished keeps the move's record (the
    # next run finishes it); local work in the way is exit 4 (refused), as at the top.
    incomplete: bool = False
    refused: bool = False


def update(ctx: Context, tree: Path, commit: str, url: str) -> None:
    """Bring every nested submodule that commit records below tree to its gitlink, recursively.

    url is where tree's repository came from (relative submodule URLs resolve against
    it). Raises GitError naming every nested submodule that could not be brought in.
    """
    _update(ctx, tree, commit, url, "")
    if ctx.failures:
        kept = "what was fetched is kept: the next run fetches only what is missing"
        more = f" ({len(ctx.failures)} nested submodules)" if len(ctx.failures) > 1 else ""
        kind = IncompleteError if ctx.incomplete else RefusedError if ctx.refused else GitError
        raise kind(
            ctx.subject,
            f"{ctx.dep_path} is at its pin, but not every nested submodule could be "
            f"checked out{more}:\n" + "\n".join(ctx.failures),
            hints.join("; ", [*_unique(ctx.hints), kept]),
        )


def ways(ctx: Context, tree: Path, commit: str, url: str, prefix: str = "") -> list[Way]:
    """The ignored files in the way of each nested checkout a move to commit's gitlinks
    makes below tree (qola/sync/ignored.py), in repositories that are there already: asked before
    anything moves, each gitlink's commit fetched first when missing (a fetch that fails
    is left to update(), which reports it)."""
    gitdir = gitfiles.git_dir(tree)
    links = gitlinks(ctx.runner, tree, gitdir, commit, False) if gitdir is not None else None
    found: list[Way] = []
    urls: dict[str, str | None] | None = None
    for link in links or ():
        sub_tree = tree / link.path
        sub_gitdir = gitfiles.git_dir(sub_tree)
        if sub_gitdir is None:
            continue  # an empty folder is populated; anything else update() refuses
        path = prefix + link.path
        head = gitfiles.read_head(sub_gitdir)[0] or head_sha(ctx.runner, sub_tree)
        if urls is None:
            urls = _urls(ctx, tree, commit, links or [], url)
        sub_url = urls.get(link.name)
        if head != link.sha or not gitfiles.has_index(sub_gitdir):
            try:
                if sub_url is not None:
                    _obtain(ctx, sub_tree, link, path, sub_url, head is None
                            or gitfiles.is_shallow(sub_gitdir), fresh=head is None)  # fmt: skip
            except QolaError:
                continue
            if not has_checkout(ctx.runner, sub_tree, link.sha):
                continue
            way = found_ways.of(ctx.runner, sub_tree, link.sha, ctx.subject,
                                f"{ctx.dep_path}/{path}", path)  # fmt: skip
            found += [way] if way is not None else []
        found += ways(ctx, sub_tree, link.sha, sub_url or url, path + "/")
    return found


def _clear_way(ctx: Context, sub_tree: Path, link: Gitlink, path: str) -> None:
    """At the nested checkout itself: its ignored files in the way, refused (exit 4) or,
    with --force, kept and cleared (what ways() saw before, or one it could not see)."""
    way = found_ways.of(ctx.runner, sub_tree, link.sha, ctx.subject, f"{ctx.dep_path}/{path}",
                        path)  # fmt: skip
    if way is None:
        return
    if not ctx.force:
        shown = listed([safetext.path(p) for p in way.paths])
        raise RefusedError(
            ctx.subject,
            f"ignored files of yours are in the way of its checkout, which would write over "
            f"them: {shown}; nothing was changed in it",
            f"save them ({found_ways.save_commands([way])[0].strip()}), or run qola with "
            "--force to save them under refs/qola/backup/ and go on",
        )
    ctx.notes.extend(found_ways.keep_and_clear(ctx.runner, [way], ctx.subject))


def _update(ctx: Context, tree: Path, commit: str, url: str, prefix: str) -> None:
    gitdir = gitfiles.git_dir(tree)
    if gitdir is None:
        return
    links = gitlinks(ctx.runner, tree, gitdir, commit, write_cache=False)
    if links is None:
        _fail(ctx, f"{prefix or '.'}: cannot read the submodules that {commit[:12]} records",
              "check that the repository is not damaged")  # fmt: skip
        return
    states = []
    for link in links:
        sub_tree = tree / link.path
        sub_gitdir = gitfiles.git_dir(sub_tree)
        done = (
            sub_gitdir is not None
            and gitfiles.has_index(sub_gitdir)
            and submodules.is_initialised(tree, link.name, link.path)
            and (
                prefix + link.path in ctx.at_target
                or gitfiles.read_head(sub_gitdir)[0] == link.sha
            )
        )
        states.append((link, done))
    # The URLs (one more git call) only when something has to be fetched or moved.
    urls = _urls(ctx, tree, commit, links, url) if not all(d for _, d in states) else {}
    for link, done in states:
        path = prefix + link.path
        sub_url = urls.get(link.name)
        if not done:
            try:
                _bring(ctx, tree, link, path, sub_url)
            except QolaError as error:
                where = f" ({sub_url})" if sub_url else ""
                _fail(ctx, f"  {path}{where} at {link.sha}: {error.problem}", error.hint)
                ctx.incomplete = ctx.incomplete or isinstance(error, IncompleteError)
                ctx.refused = ctx.refused or isinstance(error, RefusedError)
                continue
            ctx.brought += 1
        sub_tree = tree / link.path
        _update(ctx, sub_tree, link.sha, sub_url or url, path + "/")


def _bring(ctx: Context, tree: Path, link: Gitlink, path: str, url: str | None) -> None:
    """Check out one nested submodule at its gitlink (its folder empty, or a repository)."""
    runner = ctx.runner
    if url is None:
        raise GitError(ctx.subject, "its .gitmodules entry has no usable url",
                       "fix the url in .gitmodules of the commit that records it")  # fmt: skip
    outside = gitfiles.refusal(tree / link.path)
    if isinstance(outside, gitfiles.Outside):
        raise GitError(ctx.subject, f"it is not a repository git accepts ({outside})",
                       "put the submodule's folder back as git left it (or move it away) "
                       "and run qola again")  # fmt: skip
    problem = submodules.nested_path_problem(tree, link.path)
    if not submodules.is_safe_name(link.name):
        problem = f"its name {link.name!r} could put its repository anywhere"
    if problem is not None:
        raise GitError(ctx.subject, problem, "git would refuse it too")
    sub_tree = tree / link.path
    submodules.initialise(runner, tree, link.name, url, ctx.subject)
    add_source = getattr(runner.env, "add_clone_source", None)
    if callable(add_source):
        add_source(url, tree)  # the shim trusts a local source, owned by another user or not
    sub_gitdir = gitfiles.git_dir(sub_tree)
    if sub_gitdir is None:
        _populate(ctx, tree, link, path, url)
        return
    head = gitfiles.read_head(sub_gitdir)[0] or head_sha(runner, sub_tree)
    half_made = head is not None and not gitfiles.has_index(sub_gitdir)
    fresh = head is None or half_made
    if fresh:
        submodules.remove_stale_locks(gitfiles.common_dir(sub_gitdir))
    _obtain(ctx, sub_tree, link, path, url, shallow=fresh or gitfiles.is_shallow(sub_gitdir),
            fresh=head is None)  # fmt: skip
    _clear_way(ctx, sub_tree, link, path)
    if fresh and _nothing_of_anyones(ctx, sub_tree, path, half_made):
        _force_checkout(ctx, sub_tree, link.sha, path)
    else:
        # Local work was checked before anything moved; git (never forced) keeps the rest,
        # and refuses to write over a file in a repository with no commit yet.
        complete.checkout(runner, sub_tree, link.sha, ctx.subject, f"{ctx.dep_path}/{path}",
                          "checkout", "-q", "--detach", link.sha)  # fmt: skip
    keep_pin(runner, sub_tree, link.sha, ctx.subject)


def _nothing_of_anyones(ctx: Context, sub_tree: Path, path: str, half_made: bool) -> bool:
    """Whether a checkout may force its way into sub_tree, a repository with no commit or
    no index: it holds nothing but its `.git`, or its first checkout never finished and
    nothing in it differs from HEAD but missing files. A half-made one that holds more
    refuses (what observe_local_work saw is checked again here, for one it did not see:
    below a parent that has just moved)."""
    if unfinished.holds_only_git(sub_tree):
        return True
    if not half_made:
        return False
    changes = half_made_changes(ctx.runner, sub_tree, ctx.subject, "")
    if changes:
        listed = ", ".join(f"{p} ({kind})" for p, kind, _ in changes)
        raise RefusedError(
            ctx.subject,
            f"{path} has no index and holds files that are not its HEAD's: {listed}",
            f"save them (git -C {sub_tree} reset -q, then git stash push -u), "
            "or run qola with --force",
        )
    return True


def _populate(ctx: Context, tree: Path, link: Gitlink, path: str, url: str) -> None:
    """An empty folder: its repository under the parent's modules/, then the gitlink."""
    runner = ctx.runner
    sub_tree = tree / link.path
    if gitfiles.is_populated(sub_tree) or (sub_tree.exists() and not sub_tree.is_dir()):
        raise RefusedError(ctx.subject, f"{sub_tree} exists and is not a git repository",
                         "move its contents away (or delete it) and run qola again")  # fmt: skip
    gitdir = submodules.modules_dir(runner, tree, link.name, ctx.subject)
    if submodules.is_valid_gitdir(gitdir):
        # git's own choice for a submodule whose folder is empty (submodule--helper
        # clone): reuse the repository, without the index of its last checkout.
        submodules.remove_stale_locks(gitdir)
        (gitdir / "index").unlink(missing_ok=True)
        # Its core.worktree names the folder, and git reads nothing of a repository whose
        # work tree it cannot enter (`cannot chdir`): the folder first, as git makes it.
        sub_tree.mkdir(parents=True, exist_ok=True)
        if path not in ctx.prefetched:
            ctx.notes.append(f"{safetext.path(path)}: reusing {gitdir}")
        fresh = False
    else:
        submodules.refuse_unusable(gitdir, ctx.subject)
        submodules.create_gitdir(runner, gitdir, ctx.subject)
        runner.run(gitdir, "remote", "add", "--end-of-options", "origin", url,
                   subject=ctx.subject)  # fmt: skip
        fresh = True
    # The commit first, into the repository alone: until the folder is connected to it,
    # git (`submodule status`: -) and qola see the submodule as not checked out. One
    # fetched a moment ago (prefetch) is whole: git's fetch checked that it is connected.
    fetched = path in ctx.prefetched and ctx.prefetched[path] is None
    if not fetched and not has_checkout(runner, gitdir, link.sha):
        failed = ctx.prefetched.get(path)
        if failed is not None:
            raise failed  # tried a moment ago, while the parent was checked out
        # One commit deep, unless the repository has history to keep complete (git's).
        empty = gitfiles.read_head(gitdir)[0] is None
        shallow = fresh or empty or gitfiles.is_shallow(gitdir)
        _fetch_into(ctx, gitdir, gitdir, link, path, url, shallow, fresh or empty)
    else:
        mirrors.share_shallow(gitdir)  # a reused one may borrow the commit from a mirror
    sub_tree.mkdir(parents=True, exist_ok=True)
    submodules.connect(runner, sub_tree, gitdir, ctx.subject)
    _force_checkout(ctx, sub_tree, link.sha, path)
    keep_pin(runner, sub_tree, link.sha, ctx.subject)


def _force_checkout(ctx: Context, sub_tree: Path, sha: str, path: str) -> None:
    """Check out sha into a tree no checkout has finished in: HEAD first, the index last."""
    gitdir = gitfiles.git_dir(sub_tree)
    if gitdir is not None:
        (gitdir / "index").unlink(missing_ok=True)
    ctx.runner.run(sub_tree, "update-ref", "--no-deref", "HEAD", sha, subject=ctx.subject)
    # -f: nothing here is anyone's (the folder was empty, or its checkout never finished).
    try:
        complete.checkout(ctx.runner, sub_tree, sha, ctx.subject, f"{ctx.dep_path}/{path}",
                          *complete.PARALLEL, "checkout", "-f", "-q", "--detach", sha,
                          progress=True)  # fmt: skip
    except IncompleteError:
        # Not whole (a file this file system cannot hold): without its index again, it
        # stays half-made, which no fast path, nor verify, takes for checked out.
        if gitdir is not None:
            (gitdir / "index").unlink(missing_ok=True)
        raise


def _obtain(
    ctx: Context,
    sub_tree: Path,
    link: Gitlink,
    path: str,
    url: str,
    shallow: bool,
    fresh: bool = False,
) -> None:
    """Make the gitlink's commit present: already there, from the cache, or fetched by SHA."""
    runner = ctx.runner
    if has_checkout(runner, sub_tree, link.sha):
        gitdir = gitfiles.git_dir(sub_tree)
        if gitdir is not None:
            mirrors.share_shallow(gitdir)  # (another checkout may have put it in the mirror)
        return
    failed = ctx.prefetched.get(path)
    if failed is not None:
        raise failed  # tried a moment ago, while the parent was checked out: no second try
    _fetch_into(ctx, sub_tree, gitfiles.git_dir(sub_tree), link, path, url, shallow, fresh)


def _fetch_into(
    ctx: Context,
    repo: Path,
    gitdir: Path | None,
    link: Gitlink,
    path: str,
    url: str,
    shallow: bool,
    fresh: bool,
) -> None:
    """Fetch the gitlink's commit into the repository at repo (a work tree or a git dir)."""
    runner = ctx.runner
    if ctx.cache is not None and gitdir is not None:
        mirror = store.mirror_path(ctx.cache, url)
        common = gitfiles.common_dir(gitdir)
        if fresh or mirrors.borrows_from(common, mirror):
            source = fetch.Source(ctx.subject, url, hint_track="")
            env = fetch.nested_environment()  # as the fetch without the cache below
            _, how = mirrors.ensure(runner, ctx.cache, source, link.sha, ctx.offline, env=env)
            if fresh:
                mirrors.borrow(common, mirror)
            else:
                mirrors.share_shallow(common)
            how = f" ({how})" if how else ""
            ctx.notes.append(f"{safetext.path(path)}: {link.sha[:12]} from the cache {mirror}{how}")
            return
    if ctx.offline:
        raise GitError(
            ctx.subject,
            "the commit is not present locally and --offline forbids fetching it",
            hints.either(
                "run once without --offline",
                "configure once with the network: ",
                hints.configure("-DQOLA_OFFLINE=OFF"),
            ),
        )
    # The path, URL and gitlink head the message (update()): no label of its own.
    source = fetch.Source(ctx.subject, url, hint_track="")
    console.step("fetching", f"{safetext.path(path)} at {link.sha[:12]}")
    note = fetch.fetch_commit(
        runner, repo, source, link.sha, shallow, env=fetch.nested_environment()
    )
    ctx.notes.append(f"{safetext.path(path)}: {note}")


def prefetch(ctx: Context, tree: Path, commit: str, url: str) -> threading.Thread | None:
    """Start fetching, beside the parent's checkout, the gitlinks commit records below tree.

    Only into repositories made for the occasion under the parent's modules/ (nested
    submodules with no repository yet), recursively; join() the thread before anything
    else touches them. update() then finds the commits there, or the error, which it
    reports without a second try.
    """
    gitdir = gitfiles.git_dir(tree)
    if ctx.offline or gitdir is None:
        return None
    thread = threading.Thread(target=_prefetch_quietly, args=(ctx, tree, gitdir, commit, url))
    thread.start()
    return thread


def _prefetch_quietly(ctx: Context, tree: Path, gitdir: Path, commit: str, url: str) -> None:
    # Whatever goes wrong here, update() meets it again on the main thread and reports it.
    with contextlib.suppress(Exception), console.activity(f"{ctx.subject} (nested)"):
        _prefetch(ctx, tree, gitdir, commit, url, "")


def _prefetch(ctx: Context, repo: Path, gitdir: Path, commit: str, url: str, prefix: str) -> None:
    try:
        links = gitlinks(ctx.runner, repo, gitdir, commit, write_cache=False)
        if not links:
            return
        urls = _urls(ctx, repo, commit, links, url)
        for link in links:
            path = prefix + link.path
            sub_url = urls.get(link.name)
            child = gitdir / "modules" / link.name
            if sub_url is None or not submodules.is_safe_name(link.name) or os.path.lexists(child):
                continue  # update() says why, or finds what is there
            try:
                submodules.create_gitdir(ctx.runner, child, ctx.subject)
                ctx.runner.run(child, "remote", "add", "--end-of-options", "origin", sub_url,
                               subject=ctx.subject)  # fmt: skip
                _fetch_into(ctx, child, child, link, path, sub_url, shallow=True, fresh=True)
            except QolaError as error:
                ctx.prefetched[path] = error
                continue
            ctx.prefetched[path] = None
            _prefetch(ctx, child, child, link.sha, sub_url, path + "/")
    except QolaError:
        return  # update() meets the same and says so


def _urls(
    ctx: Context, tree: Path, commit: str, links: list[Gitlink], url: str
) -> dict[str, str | None]:
    """The URL of each nested submodule, from the commit's .gitmodules, resolved as git does."""
    spec = f"{commit}:.gitmodules"
    blob = ctx.runner.run(tree, "cat-file", "blob", "--end-of-options", spec, check=False)
    found_modules = (configfile.submodules(blob.stdout) if blob.status == 0 else None) or []
    declared = {m.name: m.url for m in found_modules}
    # ./ and ../ resolve against the superproject's URL as `git submodule init` does, but
    # the URL qola has it from (the manifest's, resolved down the levels), not the
    # remote.origin.url of its own config: that would choose where the nested fetch goes.
    base = url
    found: dict[str, str | None] = {}
    for link in links:
        raw = declared.get(link.name)
        if raw is None or not raw or raw.startswith("-"):
            # git ignores a url that could be read as an option (CVE-2018-17456).
            found[link.name] = None
        elif raw.startswith(("./", "../")):
            found[link.name] = relative_url(base, raw)
        else:
            found[link.name] = raw
    ctx.runner.expect_sources(u for u in found.values() if u is not None)
    return found


def _fail(ctx: Context, line: str, hint: str | Hint | None) -> None:
    ctx.failures.append(line)
    if hint:
        ctx.hints.append(hint)


def _unique(items: list[str | Hint]) -> list[str | Hint]:
    return list(dict.fromkeys(items))
