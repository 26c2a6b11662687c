"""Where a manifest's root is: --root, [qola] root, or the top of the repository holding it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qola.base import hints
from qola.base.errors import ManifestError
from qola.manifest import values
from qola.manifest.gitmodules import (
    repository_top,
)
from qola.manifest.values import (
    OFF_LIMITS,
    pass_root,
    short,
)
from qola.repo import fslimits
from qola.repo.trail import saw_dir, saw_folder

if TYPE_CHECKING:
    from qola.manifest import Loader


def root(loader: Loader, qola: dict[str, Any]) -> Path:
    if loader.root_arg is not None:
        # The command line may point anywhere (its user chose), but never into git's
        # own folders.
        root = Path(os.path.abspath(loader.root_arg))
        too_long = fslimits.problem(root, root.parts[1:], loader.path.parent)
        if too_long is not None:
            raise ManifestError(f"{short(str(root))} (--root)", *too_long)
        if not root.is_dir():
            raise ManifestError(
                str(root),
                "the root folder does not exist",
                hints.either("check --root (or QOLA_ROOT)", "check qola_checkout()'s ROOT"),
            )
        inside = values.git_dir_on(loader, os.path.realpath(root))
        if inside is not None:
            raise ManifestError(
                str(root),
                f"the root lies inside the git dir {inside}",
                "give the top of the work tree (the folder holding .git), not git's own",
            )
        saw_dir(root)
        return root
    if "root" in qola:
        root = qola_root(loader, qola["root"])
        saw_dir(root)
        return root
    root = repository_top(loader.path.parent)
    inside = values.git_dir_on(loader, os.path.realpath(root))
    if inside is not None:  # a manifest in no work tree, inside a bare repository
        raise ManifestError(
            str(loader.path),
            f"its folder lies inside the git dir {inside}",
            pass_root("keep the manifest in a work tree, or ", "pass --root"),
        )
    return root


def qola_root(loader: Loader, value: Any) -> Path:
    """`[qola] root`: the rules of a path, but relative to the manifest's folder, where
    `..` may climb up to the top of the repository holding the manifest (no further)."""
    where = "qola.root"
    if not isinstance(value, str) or not value:
        raise loader.fail(where, "must be a non-empty string")
    here = loader.path.parent
    top = repository_top(here)
    plain = f"write a folder relative to the manifest's, {here}, inside {top}"
    parts = values.relative(loader, where, value, plain, pass_root(f"{plain}; or ", "pass --root"))
    values.outside_git(loader, where, value, parts)
    root = Path(os.path.normpath(here / value))
    too_long = fslimits.problem(root, parts, here)
    if too_long is not None:
        raise loader.fail(where, *too_long)
    if os.path.commonpath([top, root]) != str(top):
        raise loader.fail(
            where,
            f"{value!r} leaves {top}, the repository holding the manifest",
            pass_root(
                "a manifest may only point inside its own repository; to use another "
                "folder, "
            ),
        )
    if not root.is_dir():
        raise loader.fail(
            where,
            f"{root} is not a folder",
            f"[qola] root is relative to the manifest's folder, {here}",
        )
    real_top, real = os.path.realpath(top), os.path.realpath(root)
    saw_folder(top, real_top)
    saw_folder(root, real)
    if os.path.commonpath([real_top, real]) != real_top:
        raise loader.fail(
            where,
            f"{value!r} leaves {top} through a symlink (to {real})",
            pass_root(
                "a manifest may only point inside its own repository; to use another "
                "folder, "
            ),
        )
    inside = values.git_dir_on(loader, real)
    if inside is not None:
        raise loader.fail(where, f"{value!r} leads into the git dir {inside}", OFF_LIMITS)
    return root
