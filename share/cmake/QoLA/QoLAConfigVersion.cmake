# Version file for find_package(QoLA <version> CONFIG) from <prefix>/share/cmake/QoLA/:
# the version file of the module of the installation beside it (QoLAInstallation.cmake).
include("${CMAKE_CURRENT_LIST_DIR}/QoLAInstallation.cmake")
_qola_locate_installation()
if(_qola_installed_module STREQUAL "")
  # find_package() lists this folder's QoLAConfig.cmake with this as its version.
  set(PACKAGE_VERSION "unknown (${_qola_installed_error})")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
  return()
endif()
include("${_qola_installed_module}/QoLAConfigVersion.cmake")
