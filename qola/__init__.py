"""qola: pin a CMake project's git dependencies to exact commits."""

__version__ = "0.1.0"
