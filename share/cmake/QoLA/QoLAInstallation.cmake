# qola: which installation of qola this folder belongs to.
# SPDX-License-Identifier: MIT
#
# pip installs the files of this folder with qola as <prefix>/share/cmake/QoLA/
# (pyproject.toml's data-files), where find_package(QoLA) looks under every
# prefix of CMAKE_PREFIX_PATH and of PATH (an active virtual environment's
# bin/ is one). They hold no module: each forwards to the module of the
# installation beside it, and tells it that installation's site-packages
# folder, whose interpreter then runs qola, active or not.
#
# The module is the package's qola/cmake/ in <prefix>/lib/pythonX.Y/site-packages;
# for an editable install (pip install -e), the cmake/ of the checkout pip
# recorded in the installation's direct_url.json (PEP 610), so that an edit of
# the checkout's module takes effect as an edit of its Python does.

include_guard(GLOBAL)

# A file:// URL's path, its %XX escapes decoded ("" when url is not a file:// URL).
function(_qola_url_path out url)
  set(path "")
  if(url MATCHES "^file://(localhost)?(/.*)$")
    set(path "${CMAKE_MATCH_2}")
    string(REGEX MATCHALL "%[0-9A-Fa-f][0-9A-Fa-f]" escapes "${path}")
    list(REMOVE_DUPLICATES escapes)
    # %25 last: the `%` it gives back must not start another escape.
    list(FIND escapes "%25" percent)
    if(NOT percent EQUAL -1)
      list(REMOVE_AT escapes ${percent})
      list(APPEND escapes "%25")
    endif()
    foreach(escape IN LISTS escapes)
      string(SUBSTRING "${escape}" 1 2 hex)
      math(EXPR code "0x${hex}")
      string(ASCII ${code} char)
      string(REPLACE "${escape}" "${char}" path "${path}")
    endforeach()
  endif()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()

# Sets, in the caller's scope, _qola_installed_module (the module's folder) and
# _qola_installed_site (the installation's site-packages folder), or
# _qola_installed_error (why there is neither).
function(_qola_locate_installation)
  set(module "")
  set(site "")
  set(error "")
  get_filename_component(prefix "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../.." ABSOLUTE)
  # lib/ first: a virtual environment's lib64 is a link to it.
  foreach(lib IN ITEMS lib lib64)
    file(GLOB infos LIST_DIRECTORIES true
      "${prefix}/${lib}/python*/site-packages/qola-*.dist-info"
      "${prefix}/${lib}/python*/dist-packages/qola-*.dist-info")
    if(NOT infos STREQUAL "")
      break()
    endif()
  endforeach()
  if(CMAKE_VERSION VERSION_LESS 3.21)
    set(error "QoLA.cmake needs CMake 3.21 or newer; this is CMake ${CMAKE_VERSION}")
  elseif(infos STREQUAL "")
    string(CONCAT error "no qola installation in ${prefix} (no "
      "lib/pythonX.Y/site-packages/qola-*.dist-info): reinstall qola, or point "
      "CMAKE_PREFIX_PATH at the folder `qola cmake-dir` prints")
  else()
    # Installed for several Pythons in one prefix: the newest's (each wrote this folder).
    list(SORT infos COMPARE NATURAL ORDER DESCENDING)
    list(GET infos 0 info)
    get_filename_component(site "${info}" DIRECTORY)
    set(module "${site}/qola/cmake")
    if(EXISTS "${info}/direct_url.json")
      file(READ "${info}/direct_url.json" record)
      string(JSON editable ERROR_VARIABLE failed GET "${record}" dir_info editable)
      if(failed STREQUAL "NOTFOUND" AND editable)
        string(JSON url ERROR_VARIABLE failed GET "${record}" url)
        _qola_url_path(tree "${url}")
        set(module "${tree}/cmake")
        if(NOT EXISTS "${module}/QoLA.cmake")
          string(CONCAT error "${info} is an editable install of ${url}, which holds "
            "no cmake/QoLA.cmake (a checkout moved or deleted?): install qola again")
        endif()
      endif()
    endif()
    if(error STREQUAL "" AND NOT EXISTS "${module}/QoLA.cmake")
      set(error "${module}/QoLA.cmake is missing: reinstall qola")
    endif()
  endif()
  if(NOT error STREQUAL "")
    set(module "")
    set(site "")
  endif()
  set(_qola_installed_module "${module}" PARENT_SCOPE)
  set(_qola_installed_site "${site}" PARENT_SCOPE)
  set(_qola_installed_error "${error}" PARENT_SCOPE)
endfunction()
