"""Whether every dependency is at its pin (or overridden), with the stamp that vouches for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from qola import stamp
from qola.errors import QolaError
from qola.observe import observe

if TYPE_CHECKING:
    from qola.manifest import Dep, Manifest

def proven(
    manifest: Manifest, deps: Sequence[Dep], look: Callable[[], bool] | None = None
) -> stamp.Proof:
    """What vouches for look()'s answer (default: every dependency at its pin or overridden,
    from files): stamp.vouch's proof of that look."""
    return stamp.vouch(manifest, look if look is not None else lambda: _at_pins(manifest, deps))


def _at_pins(manifest: Manifest, deps: Sequence[Dep]) -> bool:
    try:
        states = [observe(manifest, dep, None) for dep in deps]
    except QolaError:
        return False
    return all(state.is_synced or (state.overridden and state.own_refusal is None)
               for state in states)  # fmt: skip
