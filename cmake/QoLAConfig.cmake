# find_package(QoLA CONFIG) entry point: the module lives beside this file.
# CMAKE_PREFIX_PATH=$(python -m qola cmake-dir) finds it in an installed qola; an
# empty QOLA_PYTHON then means the interpreter of that installation (the one whose
# site-packages holds this folder), active or not.
include("${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
set(QoLA_MODULE "${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
