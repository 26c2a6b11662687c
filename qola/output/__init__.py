"""Words and files for people, CI and CMake: renderers and CMake results."""
