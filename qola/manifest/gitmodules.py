"""The root's .gitmodules and its URL, as the manifest reads them, and the top of a repository."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from qola.base.errors import ManifestError
from qola.base.urls import SCHEME as SCHEME
from qola.base.urls import SCP_LIKE as SCP_LIKE
from qola.repo import configfile, gitfiles, gitpaths
from qola.repo.trail import cannot_prove, exists, saw_file


def named_git_dir(folder: str) -> bool:
    """Would git take folder for a git dir? Named .git, or one by its files."""
    # Noted for a stamp: a folder on the way that became a git dir would fail the load.
    return os.path.basename(folder).lower() == ".git" or gitpaths.is_git_dir(folder)


def repository_top(folder: Path) -> Path:
    """The top level of the git repository containing folder, else folder itself."""
    current = folder
    while True:
        if exists(current / ".git"):
            return current
        if current.parent == current:
            return folder
        current = current.parent


def read_gitmodules(root: Path, text: str | None = None) -> list[configfile.Submodule]:
    if text is None:
        try:
            data = (root / ".gitmodules").read_bytes()
        except OSError:
            saw_file(root / ".gitmodules", None)
            return []
        saw_file(root / ".gitmodules", data)
        text = data.decode("utf-8", errors="surrogateescape")
    modules = configfile.submodules(text)
    if modules is None:  # read only by git, which rejects it or may not run here (no-op)
        raise ManifestError(str(root / ".gitmodules"), "git cannot read it as a config, or "
                            "qola cannot without git", "run `git config --file .gitmodules "
                            "--list` to see what git says")  # fmt: skip
    base = superproject_url(root)
    resolved = []
    for module in modules:
        url = module.url
        if url and url.startswith(("./", "../")):
            url = relative_url(base, url) if base else os.path.normpath(root / url)
        resolved.append(configfile.Submodule(module.name, module.path, url, module.update))
    return resolved


def superproject_url(root: Path) -> str | None:
    # Where the root's config is, not whether git accepts the root: checking that would
    # read its HEAD and branch, and make every commit in the project a change to stamps.
    gitdir = gitfiles.find_git_dir(root)
    if gitdir is None:
        return None
    try:
        data = (gitfiles.common_dir(gitdir) / "config").read_bytes()
    except OSError:
        saw_file(gitfiles.common_dir(gitdir) / "config", None)
        return None
    saw_file(gitfiles.common_dir(gitdir) / "config", data)
    path = str(gitfiles.common_dir(gitdir) / "config")
    try:
        entries = configfile.entries(data, path, includes=True)
    except configfile.UnreadableConfig:
        return None  # git refuses the root's config: every git command there says so
    if entries is None:  # the no-op path, which runs no git: the full command reads it
        raise ManifestError(path, "qola reads this config exactly only with git")
    if configfile.has_include(entries):
        cannot_prove(f"{path}: what it includes is in no stamp")
    return configfile.get(entries, "remote", "origin", "url")


def relative_url(base: str, rel: str) -> str:
    """Resolve a .gitmodules URL like ../x.git against the superproject's URL, as git does."""
    base = base.rstrip("/")
    if base.endswith("/.git"):
        base = base[: -len("/.git")]
    parts = rel.split("/")
    while parts and parts[0] in (".", ".."):
        if parts.pop(0) == "..":
            cut = max(base.rfind("/"), base.rfind(":"))
            # host:repo.git + ../x.git is host:x.git, as git says: keep an scp-like colon.
            base = base[: cut + (base[cut] == ":")] if cut > 0 else base
    joined = base + ("/" if not base.endswith(":") else "") + "/".join(parts)
    return joined if SCHEME.match(joined) or SCP_LIKE.match(joined) else os.path.normpath(joined)


def by_path(modules: list[configfile.Submodule]) -> dict[str, configfile.Submodule]:
    """The submodules by normalised path (the first of duplicates)."""
    index: dict[str, configfile.Submodule] = {}
    for module in modules:
        index.setdefault(str(PurePosixPath(module.path)), module)
    return index
