"""The overrides qola works out from a repository's own config (qola/gitrun/guard.py), and
that real git obeys them."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from repos import commit_file, git, head, init_repo

from qola.gitrun import config_listing
from qola.gitrun.git import Runner
from qola.gitrun.guard import Guard, UnsafeConfigError
from qola.repo import index


def every_setting(env: dict[str, str]) -> list[tuple[str, str]]:
    count = int(env.get("GIT_CONFIG_COUNT", "0"))
    return [
        (env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"])
        for i in range(count)
        if f"GIT_CONFIG_KEY_{i}" in env
    ]


def settings(env: dict[str, str]) -> list[tuple[str, str]]:
    """The overrides of command settings (the transport settings every call gets, apart)."""
    return [(k, v) for k, v in every_setting(env) if not k.startswith("protocol.")]


def transports(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in every_setting(env) if k.startswith("protocol.")}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init_repo(tmp_path / "repo")
    commit_file(path, "a.txt", "a\n")
    return path


def set_local(repo: Path, *pairs: tuple[str, str]) -> None:
    for key, value in pairs:
        git(repo, "config", "--add", key, value)


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's global config: the tests' isolated one, included, plus what a test adds."""
    path = tmp_path / "user.gitconfig"
    path.write_text(f"[include]\n\tpath = {os.environ['GIT_CONFIG_GLOBAL']}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(path))
    return path


def test_a_repository_without_command_settings_gets_only_the_transport_settings(repo):
    for folder in (repo, repo.parent):  # a repository, and none at all
        env = Guard().overrides(folder)
        assert settings(env) == []
        assert transports(env) == {
            "protocol.allow": "never", "protocol.https.allow": "always",
            "protocol.http.allow": "always", "protocol.ssh.allow": "always",
            "protocol.git.allow": "always", "protocol.file.allow": "always",  # the tests' own
        }  # fmt: skip
        assert set(env) == {"GIT_CONFIG_COUNT"} | {
            f"GIT_CONFIG_{kind}_{i}" for kind in ("KEY", "VALUE") for i in range(6)
        }


def test_filters_get_empty_commands_and_are_no_longer_required(repo):
    set_local(repo, ("filter.x.clean", "evil"), ("filter.x.required", "true"),
              ("filter.X Y.process", "evil"))  # fmt: skip
    assert settings(Guard().overrides(repo)) == [
        ("filter.x.clean", ""),
        ("filter.x.required", "false"),
        ("filter.X Y.process", ""),
    ]


def test_the_users_own_value_of_the_same_key_is_passed_instead(repo, user_config):
    lfs = '[filter "lfs"]\n\tsmudge = git-lfs smudge %f\n'
    user_config.write_text(user_config.read_text() + lfs)
    set_local(repo, ("filter.lfs.smudge", "evil"), ("filter.lfs.clean", "evil"))
    assert settings(Guard().overrides(repo)) == [
        ("filter.lfs.smudge", "git-lfs smudge %f"),
        ("filter.lfs.clean", ""),
    ]


def test_credential_helpers_are_reset_then_the_users_put_back_in_order(repo, user_config):
    user_config.write_text(
        user_config.read_text()
        + "[credential]\n\thelper = store\n"
        + '[credential "https://example.com"]\n\thelper = cache\n'
    )
    set_local(repo, ("credential.helper", "!evil"), ("credential.https://x.invalid.helper", "!x"))
    assert settings(Guard().overrides(repo)) == [
        ("credential.helper", ""),
        ("credential.helper", "store"),
        ("credential.https://example.com.helper", "cache"),
    ]


def test_the_environments_own_settings_come_first_and_are_kept(repo, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.version")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "0")
    set_local(repo, ("core.pager", "evil"))
    env = Guard().overrides(repo)
    assert env["GIT_CONFIG_COUNT"] == str(1 + 1 + 6)  # the environment's, the pager, transports
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("core.pager", "cat")
    assert "GIT_CONFIG_KEY_0" not in env


def test_protocol_settings_of_a_repository_never_allow_a_transport(repo, user_config):
    """Every protocol the repository's config allows is pinned to never, but those a URL in
    a manifest may use, at the user's own policy; the user's general `protocol.allow`
    (theirs to set) does not open the others."""
    set_local(repo, ("protocol.ext.allow", "always"), ("protocol.ftp.allow", "always"),
              ("protocol.allow", "always"), ("protocol.https.allow", "never"))  # fmt: skip
    found = transports(Guard().overrides(repo))
    assert found["protocol.allow"] == "never"
    assert (found["protocol.ext.allow"], found["protocol.ftp.allow"]) == ("never", "never")
    assert found["protocol.https.allow"] == "always"  # git's default: the user set none
    user_config.write_text(user_config.read_text() + "[protocol]\n\tallow = user\n"
                           '[protocol "ext"]\n\tallow = always\n')  # fmt: skip
    found = transports(Guard().overrides(repo))
    assert (found["protocol.ext.allow"], found["protocol.ftp.allow"]) == ("always", "never")
    assert found["protocol.https.allow"] == "user"  # the user's general policy


def test_an_offline_call_gets_no_transport_and_no_lazy_fetch(repo, user_config):
    user_config.write_text(user_config.read_text() + '[url "pwn::x"]\n\tinsteadOf = y:\n')
    env = Guard().overrides(repo, ("status",), online=False)
    assert (env["GIT_ALLOW_PROTOCOL"], env["GIT_NO_LAZY_FETCH"]) == ("", "1")
    assert set(transports(env).values()) == {"never"}
    assert transports(env)["protocol.pwn.allow"] == "never"
    online = Guard().overrides(repo, ("status",))
    assert "GIT_ALLOW_PROTOCOL" not in online
    assert transports(online)["protocol.pwn.allow"] == "user"  # the user's own mirror


def test_ssh_askpass_and_proxy_fall_back_on_what_the_environment_says(repo, monkeypatch):
    set_local(repo, ("core.sshCommand", "evil"), ("core.askPass", "evil"),
              ("core.gitProxy", "evil for example.com"))  # fmt: skip
    monkeypatch.delenv("GIT_SSH", raising=False)
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("SSH_ASKPASS", raising=False)
    env = Guard().overrides(repo)
    assert settings(env) == [("core.sshcommand", "ssh"), ("core.askpass", "")]
    assert env["GIT_PROXY_COMMAND"] == ""
    monkeypatch.setenv("GIT_SSH", "/opt/my ssh")
    monkeypatch.setenv("SSH_ASKPASS", "/usr/bin/ask")
    assert settings(Guard().overrides(repo)) == [
        ("core.sshcommand", shlex.quote("/opt/my ssh")),
        ("core.askpass", "/usr/bin/ask"),
    ]


def test_only_command_updates_of_submodules_are_overridden(repo):
    set_local(repo, ("submodule.a.update", "!evil"), ("submodule.b.update", "none"))
    assert settings(Guard().overrides(repo)) == [("submodule.a.update", "checkout")]


def test_nested_git_dirs_are_read_below_modules_and_through_work_tree_git_files(repo, tmp_path):
    """modules/<name with slashes>, and a submodule whose .git names a folder elsewhere."""
    nested = repo / ".git" / "modules" / "extern" / "deep"
    git(tmp_path, "init", "-q", "--bare", str(nested))
    git(nested, "config", "filter.a.clean", "evil")
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    git(elsewhere, "config", "filter.b.smudge", "evil")
    (repo / ".gitmodules").write_text('[submodule "s"]\n\tpath = sub\n\turl = ./x\n')
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text(f"gitdir: {elsewhere}\n")
    assert settings(Guard().overrides(repo)) == [("filter.a.clean", ""), ("filter.b.smudge", "")]


def test_a_filter_whose_name_holds_an_equals_sign_is_overridden_for_real(repo, tmp_path):
    """`-c filter.a=b.clean=` would split at the first `=`; the environment form cannot."""
    mark = tmp_path / "ran"
    set_local(repo, ("filter.a=b.clean", f"touch {mark}; cat"), ("filter.a=b.required", "true"))
    (repo / ".git" / "info" / "attributes").write_text("*.txt filter=a=b\n")
    os.utime(repo / "a.txt", (1, 1))
    Runner().run(repo, "status", "--porcelain")
    assert not mark.exists()
    os.utime(repo / "a.txt", (2, 2))  # status refreshed the index: make it look again
    git(repo, "status", "--porcelain")  # and plain git does run it: the test can fail
    assert mark.exists()


def test_the_overrides_are_worked_out_again_only_when_a_file_changed(repo, monkeypatch):
    """One git listing per repository, made again only when a file it read changed."""
    listings = []
    real = config_listing.repository
    monkeypatch.setattr(config_listing, "repository",
                        lambda *args: listings.append(args) or real(*args))  # fmt: skip
    guard = Guard()
    set_local(repo, ("core.pager", "evil"))
    first = guard.overrides(repo)
    assert guard.overrides(repo) == first
    assert len(listings) == 1
    set_local(repo, ("core.editor", "evil"))
    assert settings(guard.overrides(repo)) == [("core.pager", "cat"), ("core.editor", ":")]
    assert len(listings) == 2


def test_a_nested_work_tree_is_searched_even_when_its_git_dir_was_met_first(repo, tmp_path):
    """sub's git dir is below modules/ (met first there); sub's own submodule `deeper` has a
    .git file naming a folder elsewhere, whose config must be read all the same."""
    sub_gitdir = repo / ".git" / "modules" / "sub"
    git(tmp_path, "init", "-q", "--bare", str(sub_gitdir))
    (repo / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./x\n')
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text(f"gitdir: {sub_gitdir}\n")
    elsewhere = tmp_path / "deeper.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    git(elsewhere, "config", "diff.x.textconv", "evil")
    (repo / "sub" / ".gitmodules").write_text('[submodule "d"]\n\tpath = deeper\n\turl = ./y\n')
    (repo / "sub" / "deeper").mkdir()
    (repo / "sub" / "deeper" / ".git").write_text(f"gitdir: {elsewhere}\n")
    assert settings(Guard().overrides(repo)) == [("diff.x.textconv", "")]


def nest_repository(parent: Path, path: str, key: str = "filter.n.clean") -> Path:
    """A repository at parent/path with a command in its config, recorded as a gitlink in
    parent's index only (no .gitmodules entry)."""
    child = init_repo(parent / path)
    commit_file(child, "f.txt", "f\n")
    git(child, "config", key, "evil")
    git(parent, "update-index", "--add", "--cacheinfo", f"160000,{head(child)},{path}")
    return child


def test_a_repository_only_the_index_records_is_read_too(repo):
    """git status looks into every gitlink of the index that has a .git, listed or not."""
    nest_repository(repo, "hidden")
    assert settings(Guard().overrides(repo)) == [("filter.n.clean", "")]


def test_an_index_that_cannot_be_read_here_has_the_work_tree_searched_for_repositories(repo):
    """A split index (its entries in another file) is one this reader declines."""
    nest_repository(repo, "deep/down/hidden")
    git(repo, "-c", "core.splitIndex=true", "update-index", "--split-index")
    assert index.gitlink_paths(repo / ".git") is None
    assert settings(Guard().overrides(repo)) == [("filter.n.clean", "")]


def test_repositories_nested_past_the_limit_are_refused_not_skipped(repo):
    parent = repo
    for level in range(17):
        parent = nest_repository(parent, "n", key=f"filter.n{level}.clean")
    with pytest.raises(UnsafeConfigError) as caught:
        Guard().overrides(repo)
    assert "is a repository nested more than 16 levels deep" in caught.value.problem
    # 16 levels are read, every one of them.
    git(repo / ("n/" * 16).rstrip("/"), "update-index", "--force-remove", "n")
    assert len(settings(Guard().overrides(repo))) == 16


def test_a_link_leading_back_up_the_tree_is_read_once_and_ends(repo):
    child = nest_repository(repo, "child")
    (child / "up").symlink_to(repo)
    git(child, "update-index", "--add", "--cacheinfo", f"160000,{head(repo)},up")
    assert settings(Guard().overrides(repo)) == [("filter.n.clean", "")]


def test_a_config_changed_as_git_lists_it_is_listed_again_before_the_next_git(
    repo, monkeypatch
):
    """A listing is kept only when the config files git surely reads are as they were
    before it: one rewritten while git read it (its stat, taken after, shows the new text)
    would otherwise be cached as what git read, and the next git would run the new text's
    commands unoverridden. The owner's rewrite lands just as git's listing returns."""
    config = repo / ".git" / "config"
    benign = config.read_text()
    evil = benign + '[filter "p"]\n\tsmudge = touch pwned\n'
    real = config_listing.repository

    def listed_then_rewritten(*args):
        found = real(*args)
        if config.read_text() == benign:
            config.write_text(evil)
        return found

    monkeypatch.setattr(config_listing, "repository", listed_then_rewritten)
    guard = Guard()
    assert ("filter.p.smudge", "") not in settings(guard.overrides(repo))  # read benign
    assert ("filter.p.smudge", "") in settings(guard.overrides(repo))  # listed again
