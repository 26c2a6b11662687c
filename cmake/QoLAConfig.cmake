# find_package(QoLA CONFIG) entry point: the module lives beside this file.
# CMAKE_PREFIX_PATH=$(python -m qola cmake-dir) finds it in an installed qola.
include("${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
set(QoLA_MODULE "${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
