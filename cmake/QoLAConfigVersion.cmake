# Version file for find_package(QoLA <version> CONFIG).
#
# The version is qola's one version, `__version__` in the package's __init__.py,
# read here at find time: this folder is cmake/ beside qola/ in a source checkout
# and qola/cmake/ in an installed qola.
#
# While qola is 0.x a new minor version may change the module's interface,
# so 0.x is compatible with requests for the same minor version only; from
# 1.0 on, with requests for the same major version. Version ranges are
# accepted (CMake >= 3.19): the version must lie inside the range.
set(PACKAGE_VERSION "")
foreach(_qola_init IN ITEMS "${CMAKE_CURRENT_LIST_DIR}/../__init__.py"
                            "${CMAKE_CURRENT_LIST_DIR}/../qola/__init__.py")
  if(PACKAGE_VERSION STREQUAL "" AND EXISTS "${_qola_init}")
    file(STRINGS "${_qola_init}" _qola_line
         REGEX "^__version__ = \"[^\"]+\"" LIMIT_COUNT 1)
    if(_qola_line MATCHES "\"(.+)\"")
      set(PACKAGE_VERSION "${CMAKE_MATCH_1}")
    endif()
  endif()
endforeach()
unset(_qola_init)
unset(_qola_line)
set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(PACKAGE_VERSION STREQUAL "")
  # find_package() then names this file and says it is unsuitable, with the version unknown.
  set(PACKAGE_VERSION "unknown")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
  return()
endif()

if(PACKAGE_FIND_VERSION_RANGE)
  if((PACKAGE_FIND_VERSION_RANGE_MIN STREQUAL "INCLUDE"
        AND PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION_MIN)
      AND ((PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "INCLUDE"
          AND PACKAGE_VERSION VERSION_LESS_EQUAL PACKAGE_FIND_VERSION_MAX)
        OR (PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "EXCLUDE"
          AND PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MAX)))
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
elseif(NOT DEFINED PACKAGE_FIND_VERSION OR PACKAGE_FIND_VERSION STREQUAL "")
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION)
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _qola_have "${PACKAGE_VERSION}")
  set(_qola_have_major "${CMAKE_MATCH_1}")
  set(_qola_have_minor "${CMAKE_MATCH_2}")
  if(PACKAGE_FIND_VERSION_MAJOR EQUAL _qola_have_major
      AND (_qola_have_major GREATER 0 OR PACKAGE_FIND_VERSION_COUNT LESS 2
        OR PACKAGE_FIND_VERSION_MINOR EQUAL _qola_have_minor))
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
  unset(_qola_have)
  unset(_qola_have_major)
  unset(_qola_have_minor)
endif()
