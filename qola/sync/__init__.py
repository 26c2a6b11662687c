"""The engine that brings dependencies to their pins, and the verifier."""
