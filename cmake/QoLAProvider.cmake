# qola: FetchContent's dependency provider: git declarations served from qola.toml.
# SPDX-License-Identifier: MIT

#[=======================================================================[.rst:
QoLAProvider
------------

Makes qola the dependency provider of a FetchContent project (CMake 3.24 or newer),
whose CMakeLists stay as they are:

.. code-block:: sh

  cmake -S . -B build \
    -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="$(qola cmake-dir)/QoLAProvider.cmake"

Every ``FetchContent_MakeAvailable(<name>)`` of a ``GIT_REPOSITORY`` declaration is then
served by ``qola_checkout()`` from the manifest (``qola.toml`` in the top-level source
folder): the dependency of that name (matched without regard to case, as FetchContent
matches names; a character a qola name cannot hold, as in ``my.lib``, is ``_``) is
checked out at its pin, with its nested submodules, and added to the
build as FetchContent would add it (``SOURCE_SUBDIR``; ``SYSTEM`` from CMake 3.25,
``EXCLUDE_FROM_ALL`` from 3.28, as FetchContent honours them), into the declaration's
``BINARY_DIR``. ``FetchContent_GetProperties(<name>)`` then gives ``<name>_SOURCE_DIR``
(the checkout), ``<name>_BINARY_DIR`` and ``<name>_POPULATED``.

A declaration the manifest does not pin is a configure error that names it and the
commands that pin it. With ``QOLA_LOCK`` ON, it is pinned instead (``qola lock``): at
the commit its ``GIT_TAG`` names now (a tag, written beside the pin as ``tag``; a
branch, followed as ``track``; or a commit), at ``3rdparty/<name>`` beside the manifest.

A pinned declaration whose ``GIT_TAG`` (or ``GIT_REPOSITORY``) says otherwise than
the manifest is a warning naming both; the build uses the pin.

FetchContent keeps its own behaviour for a declaration that is not git (``URL``,
``SVN_REPOSITORY`` ...), that may be found by ``find_package()`` first
(``FIND_PACKAGE_ARGS``, or ``FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS``), that
overrides ``find_package()`` (``OVERRIDE_FIND_PACKAGE``), or that runs a
``PATCH_COMMAND`` or ``UPDATE_COMMAND`` (qola's patch series does that: a warning says
so), and one whose name gives no qola name, or one that is CMake's name for another
(``a_b`` beside ``a-b``; a warning): a line at each configure names it. A
``FETCHCONTENT_SOURCE_DIR_<NAME>`` still wins: FetchContent then asks no
provider. ``FETCHCONTENT_FULLY_DISCONNECTED`` is qola's ``OFFLINE``.

Cache variables
^^^^^^^^^^^^^^^

Each takes its first value from the environment variable of the same name; those of
``QoLA.cmake`` (``QOLA_PYTHON``, ``QOLA_OFFLINE`` ...) apply too.

.. variable:: QOLA_PROVIDER_MANIFEST

  The manifest that serves the declarations. Default: ``qola.toml`` in the top-level
  source folder. A relative path is relative to that folder.

.. variable:: QOLA_LOCK

  Pin each unpinned git declaration in the manifest (which is created when there is
  none) instead of stopping the configure. Default ``OFF``.
#]=======================================================================]

include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.24)
  message(FATAL_ERROR "qola: QoLAProvider.cmake needs CMake 3.24 or newer "
    "(cmake_language(SET_DEPENDENCY_PROVIDER)); this is CMake ${CMAKE_VERSION}")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/QoLA.cmake")

cmake_policy(PUSH)
cmake_policy(VERSION 3.24)

# The format of the pins file this module reads: a copy of qola/output/cmake_pins.py's
# FORMAT (a test proves the two equal).
set(_QOLA_PINS_FORMAT_READ 1)

if(NOT DEFINED CACHE{QOLA_PROVIDER_MANIFEST})
  set(_qola_default "$ENV{QOLA_PROVIDER_MANIFEST}")
  if(_qola_default STREQUAL "")
    set(_qola_default "${CMAKE_SOURCE_DIR}/qola.toml")
  endif()
  set(QOLA_PROVIDER_MANIFEST "${_qola_default}" CACHE FILEPATH
    "qola: the manifest that serves FetchContent's git declarations")
  unset(_qola_default)
endif()
_qola_option(QOLA_LOCK
  "qola: pin each unpinned FetchContent git declaration at the commit its GIT_TAG names now")

# Sets `out` to the value of the item after `keyword` in the list `items` (empty items
# kept, as cmake_parse_arguments would drop them), and `out`_GIVEN to whether it is there.
function(_qola_item_after out keyword items)
  list(FIND items "${keyword}" at)
  set(${out}_GIVEN FALSE PARENT_SCOPE)
  set(${out} "" PARENT_SCOPE)
  if(at GREATER -1)
    math(EXPR at "${at} + 1")
    list(LENGTH items count)
    set(${out}_GIVEN TRUE PARENT_SCOPE)
    if(at LESS count)
      list(GET items ${at} value)
      set(${out} "${value}" PARENT_SCOPE)
    endif()
  endif()
endfunction()

# URLs compared as people write them: without a trailing `/` or `.git`.
function(_qola_same_url out a b)
  foreach(url IN ITEMS a b)
    string(REGEX REPLACE "/+$" "" ${url} "${${url}}")
    string(REGEX REPLACE "\\.git$" "" ${url} "${${url}}")
    string(REGEX REPLACE "/+$" "" ${url} "${${url}}")
  endforeach()
  if(a STREQUAL b)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Runs `qola lock` for the declaration `name`, whose qola name is `qname` (ARGN: what
# follows `lock` on its command line), showing what it reports as it goes; a failure stops
# the configure with qola's report.
function(_qola_provider_lock name qname)
  _qola_python(python "")
  _qola_require_list_item(interpreter "${python}")
  if(NOT COMMAND _qola_run)
    include("${_QOLA_MODULE_DIR}/QoLARun.cmake")
  endif()
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/qola")
  _qola_environment(environment)
  _qola_set_environment("${environment};QOLA_CMAKE_BINARY_DIR=${CMAKE_BINARY_DIR}" saved)
  _qola_check_python("${python}")
  execute_process(
    COMMAND "${python}" -m qola.cli lock ${ARGN}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE stdout
    ERROR_VARIABLE stderr
    ECHO_ERROR_VARIABLE)
  _qola_restore_environment("${saved}")
  if(NOT status EQUAL 0)
    # Under CMake, qola reports a failure on stdout (what is not on the screen yet).
    set(said "${stdout}")
    string(STRIP "${said}" said)
    if(said STREQUAL "")
      _qola_exit_meaning(said "${status}")
      set(said "qola lock failed (${said}); what it printed is above")
    endif()
    if(NOT qname STREQUAL name)
      # qola knows the declaration by its qola name: quote it as the CMakeLists has it.
      string(REPLACE "FetchContent_Declare(${qname} " "FetchContent_Declare(${name} "
        said "${said}")
      set(name "${name}, which qola knows as ${qname}")
    endif()
    _qola_indent(said "${said}")
    message(FATAL_ERROR "qola: FetchContent_MakeAvailable(${name}):\n${said}")
  endif()
  # What it wrote (a pin, an ignore line), for the developer to commit.
  string(REGEX REPLACE "\n$" "" stdout "${stdout}")
  string(REPLACE ";" "\\;" stdout "${stdout}")
  string(REPLACE "\n" ";" lines "${stdout}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^(locked|added) ")
      if(NOT qname STREQUAL name)
        string(REGEX REPLACE "^locked ${qname}:" "locked ${qname} (FetchContent's ${name}):"
          line "${line}")
      endif()
      message(STATUS "qola: ${line}")
    endif()
  endforeach()
endfunction()

# The warnings for a pinned declaration that says otherwise than the manifest `manifest`:
# its GIT_TAG `ref` names no tag, branch or commit of the pin `entry` (name, commit, tag,
# track, url), or its GIT_REPOSITORY `url` is not the manifest's.
function(_qola_provider_compare name ref url manifest entry)
  list(GET entry 0 dep)
  list(GET entry 1 commit)
  list(GET entry 2 tag)
  list(GET entry 3 track)
  list(GET entry 4 pinned_url)
  if(ref STREQUAL "")
    set(ref master) # what FetchContent checks out without a GIT_TAG
  endif()
  string(REGEX REPLACE "^(refs/(tags|heads)/|origin/)" "" short "${ref}")
  string(TOLOWER "${ref}" lower)
  string(LENGTH "${lower}" length)
  set(prefix "")
  if(lower MATCHES "^[0-9a-f]+$" AND length GREATER_EQUAL 7)
    string(SUBSTRING "${commit}" 0 ${length} prefix)
  endif()
  if(NOT (short STREQUAL tag OR short STREQUAL track OR lower STREQUAL commit
      OR (NOT prefix STREQUAL "" AND prefix STREQUAL lower)))
    string(SUBSTRING "${commit}" 0 12 shown)
    if(NOT tag STREQUAL "")
      set(back "${tag}")
      string(APPEND shown " (tag ${tag})")
    elseif(NOT track STREQUAL "")
      set(back "${track}")
      string(APPEND shown " (from the branch ${track})")
    else()
      set(back "${commit}")
    endif()
    _qola_shell_word_now(word_ref "${ref}")
    _qola_shell_word_now(word_manifest "${manifest}")
    message(WARNING
      "qola: ${name}: GIT_TAG ${ref} does not name the commit ${manifest} pins, ${shown}; "
      "the build uses the pin. To keep it, set GIT_TAG to ${back} (what the manifest "
      "pins); to pin what GIT_TAG names instead:\n"
      "    qola bump ${dep} --to ${word_ref} -m ${word_manifest}")
  endif()
  _qola_same_url(same "${url}" "${pinned_url}")
  if(NOT same)
    _qola_url_shown(url "${url}")
    _qola_url_shown(pinned_url "${pinned_url}")
    message(WARNING
      "qola: ${name}: GIT_REPOSITORY ${url} is not the URL ${manifest} fetches ${dep} "
      "from, ${pinned_url}; the build uses the manifest's. To keep it, set GIT_REPOSITORY "
      "to ${pinned_url}; to fetch from ${url} instead, edit url in [deps.${dep}] of "
      "${manifest} (no qola command changes a url).")
  endif()
endfunction()

# `url` as a message shows it (qola's output does the same, qola/base/urls.py): without
# the user and password of its authority (an ssh URL keeps its login), nor its query; an
# scp-like user:password@host: without the password. A token must not reach a CI log.
function(_qola_url_shown out url)
  if(url MATCHES "^([Ss][Ss][Hh]|git\\+ssh|ssh\\+git)://")
    string(REGEX REPLACE "^([^:]+://[^/@:]*):[^/@]*@" "\\1@" url "${url}")
  elseif(url MATCHES "^[A-Za-z][A-Za-z0-9+.-]*://")
    string(REGEX REPLACE "^([^:]+://)[^/@]*@" "\\1" url "${url}")
    if(NOT url MATCHES "^[Ff][Ii][Ll][Ee]:")
      string(REGEX REPLACE "[?].*$" "" url "${url}")
    endif()
  else()
    string(REGEX REPLACE "^([^@/:]+):[^@/]*@([^/:]+):" "\\1@\\2:" url "${url}")
  endif()
  set(${out} "${url}" PARENT_SCOPE)
endfunction()

# A word a person can paste into a shell (QoLARun.cmake's _qola_shell_word, which the
# fast path does not read).
function(_qola_shell_word_now out word)
  if(NOT word MATCHES "^[-A-Za-z0-9_./=:,+@%]+$")
    string(REGEX REPLACE "([\\\"$`])" "\\\\\\1" word "${word}")
    set(word "\"${word}\"")
  endif()
  set(${out} "${word}" PARENT_SCOPE)
endfunction()

# Sets `out` TRUE (and leaves the declaration `name` to FetchContent, with a warning) when
# its qola name `qname` is not pinned in the pins file just read but is one name to CMake
# (QOLA_<NAME>_SOURCE_DIR ...) with a dependency `manifest` pins (a_b, where it pins a-b).
function(_qola_provider_collides out name qname manifest)
  set(${out} FALSE PARENT_SCOPE)
  _qola_cmake_names(upper "${qname}")
  _qola_cmake_names(uppers "${_QOLA_PINS}")
  list(FIND uppers "${upper}" at)
  if(at GREATER -1)
    list(GET _QOLA_PINS ${at} other)
    list(GET _QOLA_PIN_${other} 0 other)
    string(CONCAT why "qola's name for it, ${qname}, is one name to CMake with "
      "${other}, which ${manifest} pins")
    _qola_provider_leave("${name}" "${why}" WARNING "renaming the declaration lets qola pin it")
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

# Leaves the declaration `name` to FetchContent, for the reason `why`: a message of the
# mode `mode` (STATUS, or WARNING where the declaration asks what qola cannot give), ARGN
# (joined) its last clause.
function(_qola_provider_leave name why mode)
  string(CONCAT more ${ARGN})
  if(NOT more STREQUAL "")
    set(more "; ${more}")
  endif()
  message(${mode} "qola: ${name}: left to FetchContent (${why}): not pinned by qola, and "
    "qola verify does not cover it${more}")
endfunction()

# Serves the declaration `name` (its saved details, the list `details`) when qola
# should: checks it out with qola_checkout(), marks it populated, and sets, in the
# caller's scope, _qola_served_source (the folder to add, or "" for none),
# _qola_served_binary and _qola_served_options for the provider's add_subdirectory().
function(_qola_provider_serve name details)
  set(_qola_served_source "" PARENT_SCOPE)
  # Made available before (again, by a sub-project, by two dependencies of a diamond):
  # nothing to do, as FetchContent does nothing; FetchContent_MakeAvailable() then sets
  # <name>_SOURCE_DIR and the others in its caller's scope, as for any populated content.
  FetchContent_GetProperties(${name} POPULATED populated)
  if(populated)
    return()
  endif()
  string(TOLOWER "${name}" lower) # FetchContent's key
  cmake_parse_arguments(arg "EXCLUDE_FROM_ALL;SYSTEM;OVERRIDE_FIND_PACKAGE"
    "GIT_REPOSITORY;GIT_TAG;BINARY_DIR;SOURCE_DIR;SOURCE_SUBDIR;GIT_SUBMODULES_RECURSE"
    "FIND_PACKAGE_ARGS" ${details})

  # What FetchContent keeps for itself.
  if("${arg_GIT_REPOSITORY}" STREQUAL "")
    if(NOT "${details}" STREQUAL "") # not git: URL, SVN_REPOSITORY, HG_REPOSITORY
      _qola_provider_leave("${name}" "no GIT_REPOSITORY" STATUS)
    endif()
    return() # (no declaration at all: FetchContent says so)
  endif()
  get_property(find_first GLOBAL PROPERTY _FetchContent_${lower}_find_package_args DEFINED)
  get_property(overrides GLOBAL PROPERTY _FetchContent_${lower}_override_find_package DEFINED)
  if(find_first OR "FIND_PACKAGE_ARGS" IN_LIST details)
    if("${FETCHCONTENT_TRY_FIND_PACKAGE_MODE}" STREQUAL "ALWAYS")
      _qola_provider_leave("${name}" "FETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS" STATUS)
    else()
      _qola_provider_leave("${name}" "FIND_PACKAGE_ARGS" STATUS)
    endif()
    return()
  elseif(overrides OR arg_OVERRIDE_FIND_PACKAGE)
    _qola_provider_leave("${name}" "OVERRIDE_FIND_PACKAGE" STATUS)
    return()
  endif()
  foreach(step IN ITEMS PATCH_COMMAND UPDATE_COMMAND)
    _qola_item_after(command ${step} "${details}")
    if(NOT command STREQUAL "")
      _qola_provider_leave("${name}" "${step}" WARNING "qola pins no declaration that "
        "changes its sources (a patch series in the manifest, patches = \"<folder>\", does "
        "that for a pinned dependency)")
      return()
    endif()
  endforeach()

  # qola's name for it: FetchContent's with what a qola name cannot hold as `_` (my.lib:
  # my_lib), unless that is no name, or one to CMake (QOLA_<NAME>_SOURCE_DIR ...) with a
  # declaration qola serves already (a-b, a_b).
  string(REGEX REPLACE "[^A-Za-z0-9_-]" "_" qname "${name}")
  if(NOT qname MATCHES "^[A-Za-z0-9]")
    _qola_provider_leave("${name}" "a qola name starts with a letter or digit" WARNING
      "renaming the declaration lets qola pin it")
    return()
  endif()
  _qola_cmake_names(upper "${qname}")
  get_property(claim GLOBAL PROPERTY _QOLA_PROVIDER_SERVES_${upper})
  if(NOT "${claim}" STREQUAL "" AND NOT claim STREQUAL lower)
    _qola_provider_leave("${name}"
      "qola's name for it, ${qname}, is one name to CMake with ${claim}, which qola serves"
      WARNING "renaming one lets qola pin both")
    return()
  endif()
  string(TOLOWER "${qname}" key) # the pins file's

  # Which pin serves it: the pins file, while the manifest is the one it was read from;
  # else qola lock (which writes it).
  set(manifest "${QOLA_PROVIDER_MANIFEST}")
  cmake_path(ABSOLUTE_PATH manifest BASE_DIRECTORY "${CMAKE_SOURCE_DIR}" NORMALIZE)
  string(SHA1 id "${manifest}")
  string(SUBSTRING "${id}" 0 10 id)
  set(pins "${CMAKE_BINARY_DIR}/qola/pins-${id}.cmake")
  set(entry "")
  set(known FALSE)
  if(EXISTS "${pins}" AND EXISTS "${manifest}")
    include("${pins}")
    file(SHA256 "${manifest}" digest)
    if("${_QOLA_PINS_FORMAT}" STREQUAL "${_QOLA_PINS_FORMAT_READ}"
        AND digest STREQUAL _QOLA_PINS_SHA256 AND _QOLA_PINS_MANIFEST STREQUAL manifest)
      set(known TRUE)
      set(entry "${_QOLA_PIN_${key}}")
      _qola_provider_collides(collides "${name}" "${qname}" "${manifest}")
      if(entry STREQUAL "" AND collides)
        return()
      endif()
    endif()
  endif()
  if(entry STREQUAL "")
    # Unknown, or known to be unpinned: qola pins it (QOLA_LOCK) or says how to.
    _qola_item_after(ref GIT_TAG "${details}")
    set(words "${qname}" "${arg_GIT_REPOSITORY}")
    if(ref_GIVEN)
      list(APPEND words "${ref}")
    endif()
    _qola_item_after(submodules GIT_SUBMODULES "${details}")
    if(submodules_GIVEN AND submodules STREQUAL "")
      list(APPEND words --no-submodules) # GIT_SUBMODULES "": none (CMP0097)
    endif()
    list(APPEND words --manifest "${manifest}" --cmake-out "${pins}" --no-checkout)
    if(NOT QOLA_LOCK)
      list(APPEND words --check)
    endif()
    foreach(word IN LISTS words)
      _qola_require_list_item("FetchContent argument" "${word}")
    endforeach()
    _qola_provider_lock("${name}" "${qname}" ${words})
    set(_QOLA_PIN_${key} "")
    include("${pins}")
    set(entry "${_QOLA_PIN_${key}}")
    if(entry STREQUAL "")
      _qola_provider_collides(collides "${name}" "${qname}" "${manifest}")
      if(collides) # qola lock pins nothing one name to CMake with a pinned one
        return()
      endif()
      message(FATAL_ERROR "qola: ${name}: qola lock wrote no pin for it into ${pins}")
    endif()
  endif()
  list(GET entry 0 dep)
  list(GET entry 4 pinned_url)
  _qola_same_url(same "${arg_GIT_REPOSITORY}" "${pinned_url}")
  if(NOT qname STREQUAL name AND NOT same)
    # my.lib, as qola names it, is my_lib: the manifest's my_lib of another repository
    # belongs to a declaration named so, not to this one.
    _qola_url_shown(pinned_url "${pinned_url}")
    string(CONCAT why "qola's name for it, ${qname}, is the manifest's ${dep}, which pins "
      "another repository, ${pinned_url}")
    _qola_provider_leave("${name}" "${why}" WARNING "renaming the declaration lets qola pin it")
    return()
  endif()
  _qola_provider_compare("${name}" "${arg_GIT_TAG}" "${arg_GIT_REPOSITORY}" "${manifest}"
    "${entry}")

  set(offline "")
  if(FETCHCONTENT_FULLY_DISCONNECTED)
    set(offline OFFLINE)
  endif()
  list(GET entry 1 commit)
  list(GET entry 2 tag)
  string(SUBSTRING "${commit}" 0 12 _QOLA_SUMMARY_ONE)
  if(NOT tag STREQUAL "")
    string(APPEND _QOLA_SUMMARY_ONE " (tag ${tag})")
  endif()
  set(_QOLA_SUMMARY_ONE "${dep} at its pin ${_QOLA_SUMMARY_ONE}") # qola_checkout()'s words
  qola_checkout(MANIFEST "${manifest}" DEPS "${dep}" ${offline})
  _qola_cmake_names(upper "${dep}")
  set(source "${QOLA_${upper}_SOURCE_DIR}")
  FetchContent_SetPopulated(${name} SOURCE_DIR "${source}" BINARY_DIR "${arg_BINARY_DIR}")
  set_property(GLOBAL PROPERTY _QOLA_PROVIDER_SERVES_${upper} "${lower}") # as qname's

  # What of the declaration qola does not honour: a line each.
  if(NOT "${arg_SOURCE_DIR}" STREQUAL ""
      AND NOT arg_SOURCE_DIR STREQUAL "${FETCHCONTENT_BASE_DIR}/${lower}-src")
    message(STATUS "qola: ${name}: SOURCE_DIR not used: the checkout is the manifest's "
      "path, ${source}")
  endif()
  _qola_item_after(submodules GIT_SUBMODULES "${details}")
  set(unused "")
  if(NOT submodules STREQUAL "")
    list(APPEND unused "a GIT_SUBMODULES list")
  endif()
  if(DEFINED arg_GIT_SUBMODULES_RECURSE AND NOT arg_GIT_SUBMODULES_RECURSE)
    list(APPEND unused "GIT_SUBMODULES_RECURSE ${arg_GIT_SUBMODULES_RECURSE}")
  endif()
  if(NOT unused STREQUAL "")
    list(JOIN unused " and " unused)
    message(STATUS "qola: ${name}: ${unused} not honoured: all submodules follow the "
      "pin's gitlinks, recursively")
  endif()

  # What FetchContent_MakeAvailable() would add_subdirectory(), and how.
  if(NOT "${arg_SOURCE_SUBDIR}" STREQUAL "")
    string(APPEND source "/${arg_SOURCE_SUBDIR}")
  endif()
  if(NOT EXISTS "${source}/CMakeLists.txt")
    return()
  endif()
  set(options "")
  if(arg_EXCLUDE_FROM_ALL AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.28)
    list(APPEND options EXCLUDE_FROM_ALL)
  endif()
  if(arg_SYSTEM AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.25)
    list(APPEND options SYSTEM)
  endif()
  set(_qola_served_source "${source}" PARENT_SCOPE)
  set(_qola_served_binary "${arg_BINARY_DIR}" PARENT_SCOPE)
  set(_qola_served_options "${options}" PARENT_SCOPE)
endfunction()

cmake_policy(POP)

# The provider. A macro, defined outside the policy block above, as
# FetchContent_MakeAvailable() is one: the dependency's add_subdirectory() runs in the
# scope that made it available, under that scope's policies, and what its CMakeLists
# sets with PARENT_SCOPE lands where it would without qola.
macro(_qola_provide_dependency method name)
  _qola_provider_serve("${name}" "${ARGN}")
  if(NOT "${_qola_served_source}" STREQUAL "")
    FetchContent_GetProperties(${name})
    add_subdirectory("${_qola_served_source}" "${_qola_served_binary}" ${_qola_served_options})
  endif()
  unset(_qola_served_source)
  unset(_qola_served_binary)
  unset(_qola_served_options)
endmacro()

cmake_language(SET_DEPENDENCY_PROVIDER _qola_provide_dependency
  SUPPORTED_METHODS FETCHCONTENT_MAKEAVAILABLE_SERIAL)
