# find_package(QoLA CONFIG) entry point in <prefix>/share/cmake/QoLA/, where pip installs
# it with qola: it loads the module of the installation beside it, whose interpreter then
# runs qola, active or not (QoLAInstallation.cmake).
include("${CMAKE_CURRENT_LIST_DIR}/QoLAInstallation.cmake")
_qola_locate_installation()
if(_qola_installed_module STREQUAL "")
  set(QoLA_FOUND FALSE)
  set(QoLA_NOT_FOUND_MESSAGE "qola: ${_qola_installed_error}")
  return()
endif()
set(_QOLA_FORWARDED_SITE "${_qola_installed_site}") # read by QoLA.cmake as it loads
include("${_qola_installed_module}/QoLAConfig.cmake")
