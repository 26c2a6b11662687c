# qola: pin a CMake project's git dependencies to exact commits.
# SPDX-License-Identifier: MIT

#[=======================================================================[.rst:
QoLA
----

Checks out the git dependencies pinned in a qola manifest at configure time
and tells the project where they are. Use it straight from a vendored qola
checkout or through the installed package:

.. code-block:: cmake

  include(third_party/qola/cmake/QoLA.cmake)
  # or, with CMAKE_PREFIX_PATH=$(python -m qola cmake-dir):
  find_package(QoLA 0.1 CONFIG REQUIRED)

  qola_checkout(MANIFEST ${PROJECT_SOURCE_DIR}/qola.toml)
  add_subdirectory(${QOLA_AITER_SOURCE_DIR} aiter)

Commands
^^^^^^^^

.. command:: qola_checkout

  .. code-block:: cmake

    qola_checkout(
      MANIFEST <file>
      [ROOT <dir>]
      [DEPS <name>...]
      [GROUPS <group>...]
      [SAFE_DIRECTORY SCOPED|ALL|OFF]
      [OFFLINE] [FORCE] [QUIET])

  Runs ``${QOLA_PYTHON} -m qola.cli checkout`` on the manifest, which brings
  every dependency (or the ``DEPS`` named) to its pinned commit, then sets the
  result variables below in the calling scope.

  ``MANIFEST``
    The manifest (relative paths are relative to the current source folder).
    It, the root's ``.gitmodules`` and every patch file are added to
    ``CMAKE_CONFIGURE_DEPENDS``: editing a pin re-runs configure on the next
    build, and with it every other configure step of the project.
  ``ROOT``
    The folder manifest paths are relative to. Default: the top level of the
    git repository holding the manifest (``[qola] root`` may say otherwise).
  ``DEPS``
    Act on these dependencies only. Default: all of them.
  ``GROUPS``
    Act on the dependencies in these groups (the manifest's ``groups = [...]``),
    besides any ``DEPS``. A group no dependency is in is an error.
  ``SAFE_DIRECTORY``
    How git's ``safe.directory`` protection is handled for source trees that
    belong to another user. Default: ``${QOLA_SAFE_DIRECTORY}``.
  ``OFFLINE``, ``FORCE``
    As ``QOLA_OFFLINE`` and ``QOLA_FORCE`` below, for this call only.
  ``QUIET``
    No summary. Failures are still shown in full.

  A failure is a ``FATAL_ERROR`` that names the manifest and shows qola's
  output, which names each dependency that failed and its pinned SHA.

  When a previous run left a stamp proving that nothing qola looked at has
  changed (the manifest, the patches, every dependency's and nested
  submodule's HEAD, ``.git`` and git dir, the settings), the call reuses that
  run's results without starting Python. Anything it cannot prove unchanged
  goes to qola.

  Every HEAD and ``.git`` file qola read is a configure dependency too: a
  ``git checkout`` by hand inside a dependency or a nested submodule re-runs
  configure on the next build, which puts the pin back, or stops the build
  with the refusal when that would lose work. A build never compiles one
  commit while ``QOLA_<NAME>_SHA`` says another.

Cache variables
^^^^^^^^^^^^^^^

Each takes its first value from the environment variable of the same name.

.. variable:: QOLA_PYTHON

  The Python interpreter that has qola installed. Default (when empty):
  ``Python_EXECUTABLE``, else ``Python3_EXECUTABLE``, else the interpreter
  ``find_package(Python3 COMPONENTS Interpreter)`` finds.

.. variable:: QOLA_SAFE_DIRECTORY

  ``SCOPED`` (default: each repository qola touches is marked safe, for qola's
  own git commands only), ``ALL`` (``safe.directory=*``) or ``OFF``.

.. variable:: QOLA_OFFLINE

  No network: a pinned commit that is not present locally is an error.
  Default ``OFF``.

.. variable:: QOLA_FORCE

  Move a dependency even when it has local work (uncommitted changes or
  commits on no branch); qola first saves that work under
  ``refs/qola/backup/``. Default ``OFF``.

.. variable:: QOLA_SKIP_CHECKOUT

  Change nothing on disk: only verify the dependencies against the manifest.
  A mismatch is a warning, and the build goes on with what is there.
  Default ``OFF``.

.. variable:: QOLA_SOURCE_DIR_<NAME>

  Use this folder as it is for the dependency ``<NAME>`` (upper case, other
  characters than letters, digits and ``_`` replaced by ``_``), the
  FetchContent convention. qola reports the dependency as ``overridden``.
  A relative path is relative to the top-level source folder. The first
  ``qola_checkout()`` declares one such ``PATH`` setting per dependency,
  seeded from the environment variable of the same name (the ``qola``
  command line honours that variable too); from then on the cache decides,
  and an empty value means "check it out".

Result variables
^^^^^^^^^^^^^^^^

Set in the scope that called ``qola_checkout()``:

.. variable:: QOLA_<NAME>_SHA

  The pinned commit of dependency ``<NAME>`` (a full SHA).

.. variable:: QOLA_<NAME>_SOURCE_DIR

  The absolute path of its checkout (or of its override).

.. variable:: QOLA_DEPENDENCIES

  The names of the dependencies of the latest ``qola_checkout()`` call, as
  written in the manifest.

Targets
^^^^^^^

``qola-verify``
  Runs ``qola verify`` on every manifest checked out in this project; not
  part of ``all``. For CI: ``cmake --build build --target qola-verify``.
#]=======================================================================]

include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.21)
  message(FATAL_ERROR "qola: QoLA.cmake needs CMake 3.21 or newer; this is CMake ${CMAKE_VERSION}")
endif()

# Functions keep the policies in force where they are defined, whatever the
# including project's cmake_minimum_required() says.
cmake_policy(PUSH)
cmake_policy(VERSION 3.21)

# The format of the results file and its stamp this module understands: a copy of
# qola/stamp.py's FORMAT (CMake cannot import Python; a test proves the two equal).
set(_QOLA_RESULTS_FORMAT 2)
set(_QOLA_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

# --- cache settings ---------------------------------------------------------

function(_qola_env_default out name default)
  if(DEFINED ENV{${name}} AND NOT "$ENV{${name}}" STREQUAL "")
    set(${out} "$ENV{${name}}" PARENT_SCOPE)
  else()
    set(${out} "${default}" PARENT_SCOPE)
  endif()
endfunction()

function(_qola_env_bool out name)
  if(DEFINED ENV{${name}} AND "$ENV{${name}}")
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

_qola_env_default(_qola_default QOLA_PYTHON "")
set(QOLA_PYTHON "${_qola_default}" CACHE FILEPATH
  "Python interpreter with qola installed (empty: Python_EXECUTABLE, else Python3_EXECUTABLE, else find_package(Python3))")
_qola_env_default(_qola_default QOLA_SAFE_DIRECTORY SCOPED)
string(TOUPPER "${_qola_default}" _qola_default)
set(QOLA_SAFE_DIRECTORY "${_qola_default}" CACHE STRING
  "How qola's git commands treat repositories owned by another user: SCOPED, ALL or OFF")
set_property(CACHE QOLA_SAFE_DIRECTORY PROPERTY STRINGS SCOPED ALL OFF)
_qola_env_bool(_qola_default QOLA_OFFLINE)
option(QOLA_OFFLINE "qola: no network; a pinned commit missing locally is an error" ${_qola_default})
_qola_env_bool(_qola_default QOLA_FORCE)
option(QOLA_FORCE "qola: move dependencies even over local work (saved under refs/qola/backup/)"
  ${_qola_default})
_qola_env_bool(_qola_default QOLA_SKIP_CHECKOUT)
option(QOLA_SKIP_CHECKOUT "qola: change nothing on disk, only verify against the manifest"
  ${_qola_default})
unset(_qola_default)

# --- helpers ----------------------------------------------------------------

# The NAME of QOLA_<NAME>_SHA for each of a list of dependency names (they hold
# no `;`); the same rule as qola.cmake_out.cmake_name(). Two commands for the
# whole list, not a function call per dependency.
macro(_qola_cmake_names out names)
  string(REGEX REPLACE "[^A-Za-z0-9_;]" "_" ${out} "${names}")
  string(TOUPPER "${${out}}" ${out})
endmacro()

function(_qola_find_python out)
  if(NOT "${QOLA_PYTHON}" STREQUAL "")
    set(python "${QOLA_PYTHON}")
  elseif(NOT "${Python_EXECUTABLE}" STREQUAL "")
    set(python "${Python_EXECUTABLE}")
  elseif(NOT "${Python3_EXECUTABLE}" STREQUAL "")
    set(python "${Python3_EXECUTABLE}")
  else()
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(NOT Python3_Interpreter_FOUND)
      message(FATAL_ERROR
        "qola: no Python interpreter found to run qola.\n"
        "Set QOLA_PYTHON (or Python_EXECUTABLE) to one that has qola installed, e.g.\n"
        "  cmake -DQOLA_PYTHON=/usr/bin/python3 ...")
    endif()
    set(python "${Python3_EXECUTABLE}")
  endif()
  set(${out} "${python}" PARENT_SCOPE)
endfunction()

# Fails with the exact pip command when qola does not import. A success is
# remembered per interpreter, so a configure pays for it once.
function(_qola_check_import python)
  if("${_QOLA_IMPORT_CHECKED}" STREQUAL "${python}")
    return()
  endif()
  execute_process(
    COMMAND "${python}" -c "import qola.cli"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    set(install "  \"${python}\" -m pip install qola\n")
    if(EXISTS "${_QOLA_MODULE_DIR}/../pyproject.toml")
      get_filename_component(vendored "${_QOLA_MODULE_DIR}/.." ABSOLUTE)
      string(APPEND install
        "or, to match this vendored copy of the CMake module:\n"
        "  \"${python}\" -m pip install \"${vendored}\"\n")
    endif()
    _qola_indent(output "${output}")
    message(FATAL_ERROR
      "qola: ${python}: cannot import qola:\n"
      "${output}\n"
      "Install it for that interpreter:\n"
      "${install}"
      "or set QOLA_PYTHON to an interpreter that has it.")
  endif()
  set(_QOLA_IMPORT_CHECKED "${python}" CACHE INTERNAL "interpreter known to import qola")
endfunction()

# Every QOLA_SOURCE_DIR_<NAME> defined in CMake, as VAR=absolute-path pairs;
# VAR= (empty) for one defined empty, which then hides the environment's.
function(_qola_overrides out)
  get_cmake_property(variables VARIABLES)
  list(FILTER variables INCLUDE REGEX "^QOLA_SOURCE_DIR_.")
  set(pairs "")
  foreach(variable IN LISTS variables)
    if("${${variable}}" STREQUAL "")
      list(APPEND pairs "${variable}=")
    else()
      cmake_path(ABSOLUTE_PATH ${variable} BASE_DIRECTORY "${CMAKE_SOURCE_DIR}"
        NORMALIZE OUTPUT_VARIABLE dir)
      list(APPEND pairs "${variable}=${dir}")
    endif()
  endforeach()
  set(${out} "${pairs}" PARENT_SCOPE)
endfunction()

# What a run's results depend on besides files: the qola command line and
# the override in effect (CMake's setting when defined, else the environment's)
# of each dependency in the list variable `deps`.
function(_qola_stamp_key out command deps)
  _qola_cmake_names(uppers "${${deps}}")
  set(effective "")
  foreach(upper IN LISTS uppers)
    set(variable QOLA_SOURCE_DIR_${upper})
    if(DEFINED ${variable})
      set(value "${${variable}}")
      if(NOT value STREQUAL "")
        cmake_path(ABSOLUTE_PATH value BASE_DIRECTORY "${CMAKE_SOURCE_DIR}" NORMALIZE)
      endif()
    else()
      set(value "$ENV{${variable}}")
    endif()
    list(APPEND effective "${variable}=${value}")
  endforeach()
  string(SHA1 key "${_QOLA_RESULTS_FORMAT}|${command}|${effective}")
  set(${out} "${key}" PARENT_SCOPE)
endfunction()

# Sets `out` to TRUE when every entry of the stamp the results file just read
# still holds: the same checks as holds() in qola/stamp.py, which says what each
# expectation means. The results file lists the entries by kind (cmake_out.py);
# each list is walked once with a fixed number of commands per entry, so the cost
# grows linearly with the entries. (Passing the stamp as arguments would define
# one ARGV<n> variable per item; list(GET) or POP_FRONT in a loop re-read the
# whole list each time.)
function(_qola_stamp_holds out)
  set(${out} FALSE PARENT_SCOPE)
  if("${_QOLA_STAMP}" STREQUAL "")
    return()
  endif()
  foreach(path IN LISTS _QOLA_STAMP_MISSING)
    if(EXISTS "${path}")
      return()
    endif()
  endforeach()
  foreach(path IN LISTS _QOLA_STAMP_DIRS)
    if(NOT IS_DIRECTORY "${path}")
      return()
    endif()
  endforeach()
  foreach(path IN LISTS _QOLA_STAMP_PRESENT)
    if(NOT EXISTS "${path}" OR IS_DIRECTORY "${path}")
      return()
    endif()
  endforeach()
  foreach(path want IN ZIP_LISTS _QOLA_STAMP_FILES _QOLA_STAMP_SHA256)
    if(NOT EXISTS "${path}" OR IS_DIRECTORY "${path}")
      return()
    endif()
    file(SHA256 "${path}" have)
    if(NOT have STREQUAL want)
      return()
    endif()
  endforeach()
  foreach(path want IN ZIP_LISTS _QOLA_STAMP_REALPATHS _QOLA_STAMP_REALPATH_SHA256)
    file(REAL_PATH "${path}" real)
    string(SHA256 have "${real}")
    if(NOT have STREQUAL want)
      return()
    endif()
  endforeach()
  foreach(path want IN ZIP_LISTS _QOLA_STAMP_GLOBS _QOLA_STAMP_GLOB_SHA256)
    if(NOT IS_DIRECTORY "${path}")
      return() # a folder of no patches that is gone globs to nothing too
    endif()
    file(GLOB_RECURSE patches LIST_DIRECTORIES false RELATIVE "${path}" "${path}/*.patch")
    list(SORT patches)
    string(SHA256 have "${patches}")
    if(NOT have STREQUAL want)
      return()
    endif()
  endforeach()
  set(${out} TRUE PARENT_SCOPE)
endfunction()

function(_qola_exit_meaning out status)
  if(status EQUAL 1)
    set(text "the dependencies do not match the manifest")
  elseif(status EQUAL 2)
    set(text "the manifest or the command line is invalid")
  elseif(status EQUAL 3)
    set(text "a git operation failed")
  elseif(status EQUAL 4)
    set(text "refused: local work would be lost; nothing was changed")
  elseif(status EQUAL 130)
    set(text "interrupted")
  else()
    set(${out} "${status}" PARENT_SCOPE)
    return()
  endif()
  set(${out} "exit ${status}: ${text}" PARENT_SCOPE)
endfunction()

# The qola-verify target: one sub-target per qola_checkout() call.
function(_qola_add_verify_target id overrides)
  if(TARGET _qola_verify_${id})
    return()
  endif()
  set(env "")
  foreach(pair IN LISTS overrides)
    if(pair MATCHES "^([^=]+)=$")
      list(APPEND env "--unset=${CMAKE_MATCH_1}")
    else()
      list(APPEND env "${pair}")
    endif()
  endforeach()
  add_custom_target(_qola_verify_${id}
    COMMAND "${CMAKE_COMMAND}" -E env --unset=QOLA_MANIFEST --unset=QOLA_ROOT
      --unset=QOLA_SAFE_DIRECTORY ${env} ${ARGN}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    COMMENT "qola: verifying the dependencies"
    VERBATIM USES_TERMINAL)
  if(NOT TARGET qola-verify)
    add_custom_target(qola-verify)
  endif()
  add_dependencies(qola-verify _qola_verify_${id})
endfunction()

# --- the command ------------------------------------------------------------

function(qola_checkout)
  cmake_parse_arguments(PARSE_ARGV 0 arg
    "OFFLINE;FORCE;QUIET" "MANIFEST;ROOT;SAFE_DIRECTORY" "DEPS;GROUPS")
  if(DEFINED arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "qola_checkout: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(DEFINED arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "qola_checkout: ${arg_KEYWORDS_MISSING_VALUES} needs a value")
  endif()
  if(NOT DEFINED arg_MANIFEST)
    message(FATAL_ERROR "qola_checkout: MANIFEST <file> is required")
  endif()
  cmake_path(ABSOLUTE_PATH arg_MANIFEST NORMALIZE OUTPUT_VARIABLE manifest)
  if(NOT EXISTS "${manifest}" OR IS_DIRECTORY "${manifest}")
    message(FATAL_ERROR "qola: ${manifest}: no such manifest (qola_checkout MANIFEST)")
  endif()
  set(root "")
  if(DEFINED arg_ROOT)
    cmake_path(ABSOLUTE_PATH arg_ROOT NORMALIZE OUTPUT_VARIABLE root)
  endif()
  if(DEFINED arg_SAFE_DIRECTORY)
    string(TOUPPER "${arg_SAFE_DIRECTORY}" safe)
  else()
    string(TOUPPER "${QOLA_SAFE_DIRECTORY}" safe)
  endif()
  if(NOT safe MATCHES "^(SCOPED|ALL|OFF)$")
    message(FATAL_ERROR
      "qola_checkout: SAFE_DIRECTORY (or QOLA_SAFE_DIRECTORY) is '${safe}'; use SCOPED, ALL or OFF")
  endif()
  string(TOLOWER "${safe}" safe)
  set(offline OFF)
  if(arg_OFFLINE OR QOLA_OFFLINE)
    set(offline ON)
  endif()
  set(force OFF)
  if(arg_FORCE OR QOLA_FORCE)
    set(force ON)
  endif()

  # Before anything can fail: a fixed manifest must re-run configure.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")

  set(selection "${arg_DEPS}")
  if(DEFINED arg_GROUPS)
    string(APPEND selection "|groups=${arg_GROUPS}")
  endif()
  string(SHA1 id "${manifest}|${root}|${selection}")
  string(SUBSTRING "${id}" 0 10 id)
  cmake_path(GET manifest STEM stem)
  string(MAKE_C_IDENTIFIER "${stem}" stem)
  set(workdir "${CMAKE_BINARY_DIR}/qola")
  set(results "${workdir}/${stem}-${id}.cmake")
  file(MAKE_DIRECTORY "${workdir}")

  _qola_find_python(python)
  _qola_overrides(overrides)

  set(common --manifest "${manifest}" --safe-directory ${safe})
  if(NOT root STREQUAL "")
    list(APPEND common --root "${root}")
  endif()
  foreach(group IN LISTS arg_GROUPS)
    list(APPEND common --group "${group}")
  endforeach()
  set(names "")
  if(DEFINED arg_DEPS)
    set(names -- ${arg_DEPS})
  endif()
  if(QOLA_SKIP_CHECKOUT)
    set(command "${python}" -m qola.cli verify ${common} --cmake-out "${results}" ${names})
  else()
    set(command "${python}" -m qola.cli checkout ${common} --cmake-out "${results}")
    if(offline)
      list(APPEND command --offline)
    endif()
    if(force)
      list(APPEND command --force)
    endif()
    list(APPEND command ${names})
  endif()

  # Fast path: the last successful run had the same settings and overrides,
  # and its stamp still holds.
  set(fast FALSE)
  if(NOT QOLA_SKIP_CHECKOUT AND DEFINED _QOLA_DEPS_${id} AND EXISTS "${results}")
    _qola_stamp_key(key "${command}" _QOLA_DEPS_${id})
    if("${_QOLA_KEY_${id}}" STREQUAL "${key}")
      _qola_read_results("${results}")
      if("${_QOLA_FORMAT}" STREQUAL "${_QOLA_RESULTS_FORMAT}")
        _qola_stamp_holds(fast)
      endif()
    endif()
  endif()

  if(NOT fast)
    unset(_QOLA_KEY_${id} CACHE)
    _qola_run("${python}" "${manifest}" "${results}" "${overrides}" ${command})
    _qola_read_results("${results}")
    if(NOT "${_QOLA_FORMAT}" STREQUAL "${_QOLA_RESULTS_FORMAT}")
      message(FATAL_ERROR
        "qola: ${results} has format '${_QOLA_FORMAT}', this QoLA.cmake reads format "
        "${_QOLA_RESULTS_FORMAT}: the qola package (${python}) and the CMake module "
        "(${_QOLA_MODULE_DIR}) are different versions")
    endif()
    if(NOT QOLA_SKIP_CHECKOUT AND NOT "${_QOLA_STAMP}" STREQUAL "")
      # Before the override settings below are declared: seeded from the
      # environment, they leave the key as the run saw it.
      _qola_stamp_key(key "${command}" QOLA_DEPENDENCIES)
      set(_QOLA_KEY_${id} "${key}" CACHE INTERNAL "qola: settings of the last good checkout")
    endif()
  endif()
  set(_QOLA_DEPS_${id} "${QOLA_DEPENDENCIES}" CACHE INTERNAL "qola: dependencies of a manifest")
  # One override setting per dependency, seeded from the environment; from
  # then on the cache decides (empty: check the dependency out).
  _qola_cmake_names(uppers "${QOLA_DEPENDENCIES}")
  foreach(name upper IN ZIP_LISTS QOLA_DEPENDENCIES uppers)
    if(NOT DEFINED CACHE{QOLA_SOURCE_DIR_${upper}})
      _qola_env_default(seed QOLA_SOURCE_DIR_${upper} "")
      set(QOLA_SOURCE_DIR_${upper} "${seed}" CACHE PATH
        "qola: use this folder as it is for dependency ${name} (empty: check it out)")
    endif()
  endforeach()

  if(_QOLA_CONFIGURE_DEPENDS)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_QOLA_CONFIGURE_DEPENDS})
  endif()
  foreach(variable IN LISTS _QOLA_RESULT_VARIABLES)
    set(${variable} "${${variable}}" PARENT_SCOPE)
  endforeach()

  if(NOT arg_QUIET)
    if(fast)
      # One message for all (each message() costs as much as a dozen other commands);
      # the lines look as if each had its own.
      set(lines "")
      foreach(name upper IN ZIP_LISTS QOLA_DEPENDENCIES uppers)
        string(SUBSTRING "${QOLA_${upper}_SHA}" 0 12 short)
        if(NOT "${QOLA_SOURCE_DIR_${upper}}" STREQUAL "")
          string(APPEND lines "\n-- qola: ${name} overridden by ${QOLA_${upper}_SOURCE_DIR}")
        else()
          string(APPEND lines "\n-- qola: ${name} ${short} unchanged since the last configure")
        endif()
      endforeach()
      if(NOT lines STREQUAL "")
        string(SUBSTRING "${lines}" 4 -1 lines)
        message(STATUS "${lines}")
      endif()
    else()
      string(REGEX REPLACE "\n$" "" lines "${_qola_output}")
      string(REPLACE "\n" ";" lines "${lines}")
      foreach(line IN LISTS lines)
        if(NOT line MATCHES "^qola: ")
          string(PREPEND line "qola: ")
        endif()
        message(STATUS "${line}")
      endforeach()
    endif()
  endif()

  set(verify "${python}" -m qola.cli verify ${common} ${names})
  _qola_add_verify_target(${id} "${overrides}" ${verify})
endfunction()

# Includes the results file into the caller's scope (a macro on purpose).
macro(_qola_read_results file)
  set(_QOLA_FORMAT "")
  set(_QOLA_STAMP "")
  foreach(_qola_kind MISSING DIRS PRESENT FILES SHA256 REALPATHS REALPATH_SHA256 GLOBS
      GLOB_SHA256)
    set(_QOLA_STAMP_${_qola_kind} "")
  endforeach()
  set(_QOLA_CONFIGURE_DEPENDS "")
  set(_QOLA_RESULT_VARIABLES "")
  include("${file}")
endmacro()

# Indents every line, so that CMake shows it as it is instead of re-wrapping it.
function(_qola_indent out text)
  string(STRIP "${text}" text)
  string(REPLACE "\n" "\n    " text "    ${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Runs qola with the CMake overrides in its environment. On success sets
# _qola_output (stdout, then stderr) in the caller; on failure stops the
# configure with the whole output.
function(_qola_run python manifest results overrides)
  _qola_check_import("${python}")
  # CMake's settings are passed as options; these would otherwise override or
  # add to them from the environment of whoever started CMake.
  set(cleared QOLA_MANIFEST QOLA_ROOT QOLA_SAFE_DIRECTORY QOLA_OFFLINE QOLA_FORCE)
  set(saved "")
  foreach(variable IN LISTS cleared)
    if(DEFINED ENV{${variable}})
      list(APPEND saved "${variable}=$ENV{${variable}}")
      unset(ENV{${variable}})
    endif()
  endforeach()
  foreach(pair IN LISTS overrides)
    string(FIND "${pair}" "=" eq)
    string(SUBSTRING "${pair}" 0 ${eq} variable)
    math(EXPR eq "${eq} + 1")
    string(SUBSTRING "${pair}" ${eq} -1 value)
    if(DEFINED ENV{${variable}})
      list(APPEND saved "${variable}=$ENV{${variable}}")
    endif()
    list(APPEND cleared ${variable})
    if(value STREQUAL "")
      unset(ENV{${variable}})
    else()
      set(ENV{${variable}} "${value}")
    endif()
  endforeach()

  execute_process(
    COMMAND ${ARGN}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE stdout
    ERROR_VARIABLE stderr)

  foreach(variable IN LISTS cleared)
    unset(ENV{${variable}})
  endforeach()
  foreach(pair IN LISTS saved)
    string(FIND "${pair}" "=" eq)
    string(SUBSTRING "${pair}" 0 ${eq} variable)
    math(EXPR eq "${eq} + 1")
    string(SUBSTRING "${pair}" ${eq} -1 value)
    set(ENV{${variable}} "${value}")
  endforeach()

  set(output "${stdout}${stderr}")
  if(status EQUAL 0 OR (QOLA_SKIP_CHECKOUT AND status EQUAL 1))
    if(status EQUAL 1)
      _qola_indent(shown "${output}")
      message(WARNING
        "qola: ${manifest}: the dependencies do not match the manifest. "
        "QOLA_SKIP_CHECKOUT is ON, so they were left as they are:\n${shown}")
    endif()
    if(NOT EXISTS "${results}")
      _qola_indent(shown "${output}")
      message(FATAL_ERROR "qola: ${python} -m qola.cli did not write ${results}:\n${shown}")
    endif()
    set(_qola_output "${stderr}${stdout}" PARENT_SCOPE)
    return()
  endif()
  if(output MATCHES "No module named '?qola")
    # qola went away since the last check (uninstalled, another venv).
    set(_QOLA_IMPORT_CHECKED "" CACHE INTERNAL "")
    _qola_check_import("${python}")
  endif()
  _qola_exit_meaning(meaning "${status}")
  set(hint "")
  if(status EQUAL 4)
    list(JOIN ARGN " " once)
    string(REPLACE " --cmake-out \"${results}\"" "" once "${once}")
    string(REPLACE " --cmake-out ${results}" "" once "${once}")
    string(CONCAT hint "Commit or stash that work. Or let qola save it under refs/qola/backup/ and "
      "move on, once:\n    ${once} --force\n"
      "or on every configure: -DQOLA_FORCE=ON (it stays in the cache until set OFF).\n")
  endif()
  _qola_indent(shown "${output}")
  list(JOIN ARGN " " command)
  message(FATAL_ERROR
    "qola: ${manifest}: checkout failed (${meaning}):\n"
    "${shown}\n"
    "${hint}"
    "The command was:\n"
    "    ${command}")
endfunction()

cmake_policy(POP)
