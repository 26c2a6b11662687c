"""The legacy manifest: dependencies from [qola] keys such as aiter_commit = "…"."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qola.manifest import values
from qola.manifest.model import LEGACY_KEYS, Dep
from qola.manifest.values import (
    check_name,
    match_submodule,
)
from qola.repo import configfile

if TYPE_CHECKING:
    from qola.manifest import Loader

@dataclass
class Extras:
    """What `[qola] <name>_<key>` keys add to a legacy `<name>_commit` pin."""

    track: str | None = None
    url: str | None = None
    submodules: bool = True
    patches: str | None = None
    groups: tuple[str, ...] = ()
    tag: str | None = None
    allowed_signers: str | None = None
    keyring: str | None = None


def deps(loader: Loader, qola: dict[str, Any],
    root: Path,
    modules: list[configfile.Submodule],
    taken: set[str],
) -> list[Dep]:
    deps: list[Dep] = []
    patches_dir = qola.get("patches_dir")
    if patches_dir is not None:
        if not isinstance(patches_dir, str):
            raise loader.fail("qola.patches_dir", "must be a string",
                              values.string_hint("qola.patches_dir"))  # fmt: skip
        patches_dir = values.path(loader, "qola.patches_dir", patches_dir, root)
    for key, value in qola.items():
        if not key.endswith("_commit") or key == "_commit":
            continue
        name = key[: -len("_commit")]
        where = f"qola.{key}"
        if name in taken:
            raise loader.fail(
                where,
                f"dependency {name!r} is also declared as [deps.{name}]",
                f"keep one: remove {key} or the [deps.{name}] table",
            )
        if not isinstance(value, str):
            raise loader.fail(where, f"must be a string, not {value!r}", values.string_hint(where))
        check_name(loader, where, name)
        commit = values.commit(loader, where, name, value, legacy=True)
        extra = extras(loader, qola, name, root)
        module = match_submodule(loader, where, name, None, modules)
        url = extra.url
        if url is None:
            if not module.url:
                raise loader.fail(
                    where,
                    f"submodule {module.name!r} in .gitmodules has no url",
                    f'give one: {name}_url = "…"',
                )
            url = values.url(loader, where, module.url, root)
        deps.append(
            Dep(
                name=name,
                path=values.path(loader, where, module.path, root, "dependency"),
                url=url,
                commit=commit,
                track=extra.track,
                submodules=extra.submodules,
                patches=extra.patches or patches_dir,
                submodule_name=module.name,
                key=where,
                line=loader.line(where),
                groups=extra.groups,
                tag=extra.tag,
                allowed_signers=extra.allowed_signers,
                keyring=extra.keyring,
            )
        )
    shared = [d for d in deps if f"{d.name}_patches" not in qola]
    if patches_dir is not None and deps and not shared:
        raise loader.fail(
            "qola.patches_dir",
            "is the patch folder of no dependency: each [qola] pin names its own "
            "(<name>_patches)",
            "remove patches_dir, or the <name>_patches it stands for",
        )
    if patches_dir is not None and len(shared) > 1:
        # One folder cannot be the patch series of several repositories.
        raise loader.fail(
            "qola.patches_dir",
            f"is one patch folder but [qola] pins {len(shared)} dependencies "
            f"({', '.join(d.name for d in shared)})",
            f'give each its own: {shared[0].name}_patches = "…" (or a [deps.<name>] table)',
        )
    return deps


def extras(loader: Loader, qola: dict[str, Any], name: str, root: Path) -> Extras:
    """The `<name>_tag`, `_track`, `_url`, `_submodules`, `_patches`, `_groups`,
    `_allowed_signers` and `_keyring` keys beside `<name>_commit`."""
    found = Extras()
    for key in LEGACY_KEYS:
        full = f"{name}_{key}"
        if full not in qola:
            continue
        where, value = f"qola.{full}", qola[full]
        if key == "submodules":
            if not isinstance(value, bool):
                raise loader.fail(where, "must be true or false")
            found.submodules = value
        elif key == "groups":
            found.groups = values.groups(loader, where, value)
        elif not isinstance(value, str):
            raise loader.fail(where, f"must be a string, not {value!r}", values.string_hint(where))
        elif key == "track":
            found.track = values.track(loader, where, value)
        elif key == "tag":
            found.tag = values.tag(loader, where, value)
        elif key == "url":
            found.url = values.url(loader, where, value, root)
        elif key == "allowed_signers":
            found.allowed_signers = values.key_file(loader, where, value, root)
        elif key == "keyring":
            found.keyring = values.key_file(loader, where, value, root)
        else:
            found.patches = values.path(loader, where, value, root)
    return found
