# find_package(QoLA CONFIG) entry point: the module lives beside this file. An
# installed qola's <prefix>/share/cmake/QoLA/QoLAConfig.cmake loads this one (from
# site-packages, or an editable install's checkout); CMAKE_PREFIX_PATH set to this
# folder finds it too. An empty QOLA_PYTHON then means the interpreter of that
# installation, active or not.
include("${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
set(QoLA_MODULE "${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")
