"""Property: any bytes load as a manifest or are a manifest error (exit 2), never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qola import manifest
from qola.base.errors import ManifestError
from qola.cli import cli

SHA = "0123456789abcdef0123456789abcdef01234567"

# Pieces of real manifests, so that examples get past the TOML parser into validation.
_FRAGMENTS = [
    "[qola]\n",
    "schema = 1\n",
    "schema = 99\n",
    'root = "."\n',
    'root = "../x"\n',
    "[deps.lib]\n",
    '[deps."a b"]\n',
    "[deps]\n",
    'path = "3rdparty/lib"\n',
    'path = "../out"\n',
    'path = "/abs"\n',
    'path = "a/.git/b"\n',
    'path = "a\\u0001"\n',
    'url = "https://example.invalid/lib.git"\n',
    'url = "ext::sh -c x"\n',
    'url = "-oProxyCommand=x"\n',
    'url = "user@host:path"\n',
    f'commit = "{SHA}"\n',
    'commit = "main"\n',
    f'lib_commit = "{SHA[:9]}"\n',
    'patches_dir = "p"\n',
    "submodules = false\n",
    "submodules = 3\n",
    'track = "main"\n',
    'pathh = "x"\n',
    "[[modules]]\n",
    'name = "x"\n',
    "= = =\n",
    '"\n',
    "\r\n",
    "\x00",
    "\ufeff",
    "[deps.lib.path]\n",
    "deps = 1\n",
    "qola = []\n",
]

manifest_bytes = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map(lambda parts: "".join(parts).encode()),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=12)), max_size=10).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass")
    ),
)


@settings(max_examples=300, deadline=None)
@given(data=manifest_bytes)
def test_manifest_load_never_raises_anything_but_a_manifest_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="qola-fuzz-") as folder:
        path = Path(folder, "qola.toml")
        path.write_bytes(data)
        try:
            loaded = manifest.load(path)
        except ManifestError as error:
            assert error.exit_code == 2
            assert error.render(cmake_build=None).startswith("qola: ")
        else:
            assert all(dep.name and dep.commit for dep in loaded.deps)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=manifest_bytes)
def test_cli_on_any_manifest_exits_with_a_documented_code_and_no_traceback(data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="qola-fuzz-") as folder:
        path = Path(folder, "qola.toml")
        path.write_bytes(data)
        # catch_exceptions=False: an uncaught exception fails the test with its traceback.
        res = CliRunner().invoke(cli, ["verify", "-m", str(path)], catch_exceptions=False)
        assert res.exit_code in (0, 1, 2), res.output
        assert "Traceback" not in res.stderr
        if res.exit_code == 2:
            assert res.stderr.startswith("qola: ")
        assert sorted(p.name for p in Path(folder).iterdir()) == ["qola.toml"]  # wrote nothing
