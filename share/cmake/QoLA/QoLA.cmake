# include("$(qola cmake-dir)/QoLA.cmake") where `qola cmake-dir` prints
# <prefix>/share/cmake/QoLA/: the module of the installation beside it, whose interpreter
# then runs qola, active or not (QoLAInstallation.cmake). QoLAProvider.cmake here is a
# copy of this file: each loads the file of its own name from that module.
include("${CMAKE_CURRENT_LIST_DIR}/QoLAInstallation.cmake")
_qola_locate_installation()
get_filename_component(_qola_name "${CMAKE_CURRENT_LIST_FILE}" NAME)
if(NOT _qola_installed_module STREQUAL "" AND NOT EXISTS "${_qola_installed_module}/${_qola_name}")
  set(_qola_installed_error "this qola has no ${_qola_name} (${_qola_installed_module})")
endif()
if(NOT _qola_installed_error STREQUAL "")
  message(FATAL_ERROR "qola: ${_qola_installed_error}")
endif()
set(_QOLA_FORWARDED_SITE "${_qola_installed_site}") # read by QoLA.cmake as it loads
include("${_qola_installed_module}/${_qola_name}")
unset(_qola_name)
