# qola: pin a CMake project's git dependencies to exact commits.
# SPDX-License-Identifier: MIT

#[=======================================================================[.rst:
QoLA
----

Checks out the git dependencies pinned in a qola manifest at configure time
and tells the project where they are. Use it from an installed qola, from a
qola checkout of your own, or fetched by CMake:

.. code-block:: cmake

  # an installed qola: its virtual environment active, or CMAKE_PREFIX_PATH=$(qola cmake-dir)
  find_package(QoLA 0.1 CONFIG REQUIRED)
  # or a qola checkout (a submodule, say):
  include(third_party/qola/cmake/QoLA.cmake)
  # or fetched at configure time (CPMAddPackage works the same way):
  include(FetchContent)
  FetchContent_Declare(qola GIT_REPOSITORY https://github.com/… GIT_TAG <commit>)
  FetchContent_MakeAvailable(qola)

  qola_checkout(MANIFEST ${PROJECT_SOURCE_DIR}/qola.toml)
  add_subdirectory(${QOLA_AITER_SOURCE_DIR} aiter)

From a qola checkout or a fetched one, the module runs that checkout's own
Python package (it puts the checkout on ``PYTHONPATH`` for qola alone): the
interpreter needs only qola's dependencies (click, GitPython, tomli-w), and
configure names the one it lacks and the line that installs it.

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
    No summary and no progress. Failures and warnings are still shown in full.

  While qola works, what it reports (each clone, fetch and move) is shown as
  it happens; then one line per dependency that changed and one line for the
  rest (``-- qola: qola.toml: 3 dependencies at their pins``). The line per
  dependency that did not change is a ``VERBOSE`` message
  (``cmake --log-level=VERBOSE``).

  A failure is a ``FATAL_ERROR`` that names the manifest and shows qola's
  report once (what qola did before it, shown live, is not repeated): each
  dependency that failed, its pinned SHA, and what to do, in CMake's terms
  (``-DQOLA_FORCE=ON``, ``-DQOLA_SAFE_DIRECTORY=SCOPED``, or the one command to
  run once).

  A pin the root's gitlink disagrees with (a pin edited by hand) is a
  warning at every configure until the two agree; it names both commits and
  the ``qola bump`` command that stages the pin.

  Several calls in one build, each with its own manifest, keep their own
  results, stamps and ``qola-verify`` step; the result variables are set in
  each caller's scope. Two manifests may pin the same dependency folder to
  the same commit; to different commits it is a configure error naming both
  manifests, raised before anything moves by whichever call comes first (each
  call knows the calls the last configure made after it).

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

  The Python interpreter that runs qola. When empty: the interpreter of the
  installation that provided this module (the one whose ``site-packages``
  holds it, or whose ``<prefix>/share/cmake/QoLA/`` loaded it: a virtual
  environment that need not be active); else the first that can run qola of
  ``Python_EXECUTABLE``, ``Python3_EXECUTABLE``, the active virtual
  environment's (``VIRTUAL_ENV``, then ``CONDA_PREFIX``), and the one
  ``find_package(Python3 COMPONENTS Interpreter)`` finds. The choice is made
  once and kept in the cache; configure says which it took, and which it
  passed over and why.

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
# qola/repo/trail.py's FORMAT (CMake cannot import Python; a test proves the two equal);
# and the module's folder. In the cache too: qola_checkout() may be called from a
# folder that did not include this file, above it (FetchContent, add_subdirectory).
set(_QOLA_RESULTS_FORMAT 2 CACHE INTERNAL "qola: the results format QoLA.cmake reads")
set(_QOLA_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "qola: QoLA.cmake's folder")
set(_QOLA_RESULTS_FORMAT 2)
set(_QOLA_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")
# The site-packages folder of the installation whose <prefix>/share/cmake/QoLA/ loaded
# this module (share/cmake/QoLA/QoLAInstallation.cmake), whose interpreter runs qola.
set(_QOLA_INSTALLED_SITE "${_QOLA_FORWARDED_SITE}" CACHE INTERNAL
  "qola: the site-packages folder of the installation that provided the module")

# This file holds what every configure runs; what only a run of qola needs (finding
# Python, running it, explaining failures) is in QoLARun.cmake, read only then.

# --- cache settings ---------------------------------------------------------
# Each is declared, from the environment or its default, only while the cache lacks it.

if(NOT DEFINED CACHE{QOLA_PYTHON})
  set(QOLA_PYTHON "$ENV{QOLA_PYTHON}" CACHE FILEPATH
    "Python interpreter that runs qola (empty: found once, then kept; see QoLA.cmake)")
endif()
if(NOT DEFINED CACHE{QOLA_SAFE_DIRECTORY})
  set(_qola_default SCOPED)
  if(NOT "$ENV{QOLA_SAFE_DIRECTORY}" STREQUAL "")
    string(TOUPPER "$ENV{QOLA_SAFE_DIRECTORY}" _qola_default)
  endif()
  set(QOLA_SAFE_DIRECTORY "${_qola_default}" CACHE STRING
    "How qola's git commands treat repositories owned by another user: SCOPED, ALL or OFF")
  set_property(CACHE QOLA_SAFE_DIRECTORY PROPERTY STRINGS SCOPED ALL OFF)
  unset(_qola_default)
endif()
# An ON/OFF setting, ON when the environment variable of its name is true.
macro(_qola_option name help)
  if(NOT DEFINED CACHE{${name}})
    set(_qola_default OFF)
    if(DEFINED ENV{${name}} AND "$ENV{${name}}")
      set(_qola_default ON)
    endif()
    option(${name} "${help}" ${_qola_default})
    unset(_qola_default)
  endif()
endmacro()
_qola_option(QOLA_OFFLINE "qola: no network; a pinned commit missing locally is an error")
_qola_option(QOLA_FORCE
  "qola: move dependencies even over local work (saved under refs/qola/backup/)")
_qola_option(QOLA_SKIP_CHECKOUT "qola: change nothing on disk, only verify against the manifest")

# --- helpers every configure uses ---------------------------------------------

# The NAME of QOLA_<NAME>_SHA for each of a list of dependency names (they hold
# no `;`); the same rule as qola.output.cmake_results.cmake_name(). Two commands for the
# whole list, not a function call per dependency.
macro(_qola_cmake_names out names)
  string(REGEX REPLACE "[^A-Za-z0-9_;]" "_" ${out} "${names}")
  string(TOUPPER "${${out}}" ${out})
endmacro()

# The interpreter that runs qola: QOLA_PYTHON, else the one found before while
# what it was found from is unchanged (no interpreter starts for that), else a new
# search (QoLARun.cmake).
function(_qola_python out quiet)
  if(NOT "${QOLA_PYTHON}" STREQUAL "")
    set(${out} "${QOLA_PYTHON}" PARENT_SCOPE)
  elseif("${_QOLA_PYTHON_INPUTS}" STREQUAL
      "${_QOLA_MODULE_DIR}|${_QOLA_INSTALLED_SITE}|${Python_EXECUTABLE}|${Python3_EXECUTABLE}"
      AND EXISTS "${_QOLA_PYTHON_FOUND}")
    set(${out} "${_QOLA_PYTHON_FOUND}" PARENT_SCOPE)
  else()
    if(NOT COMMAND _qola_run)
      include("${_QOLA_MODULE_DIR}/QoLARun.cmake")
    endif()
    _qola_find_python(python "${quiet}")
    set(${out} "${python}" PARENT_SCOPE)
  endif()
endfunction()

# What a run's results depend on besides files: the qola command line (and the
# module's folder, where a qola source tree lends its package), and
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
  string(SHA1 key "${_QOLA_RESULTS_FORMAT}|${_QOLA_MODULE_DIR}|${command}|${effective}")
  set(${out} "${key}" PARENT_SCOPE)
endfunction()

# Sets `out` to TRUE when every entry of the stamp the results file just read
# still holds: the same checks as holds() in qola/repo/trail.py, which says what each
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


# Includes the caller's `results` file into the caller's scope (a macro on purpose). It
# takes no argument: a macro's arguments are pasted into its body before it runs, so a
# path given as one would have its `${...}` expanded.
macro(_qola_read_results)
  set(_QOLA_FORMAT "")
  set(_QOLA_STAMP "")
  foreach(_qola_kind MISSING DIRS PRESENT FILES SHA256 REALPATHS REALPATH_SHA256 GLOBS
      GLOB_SHA256)
    set(_QOLA_STAMP_${_qola_kind} "")
  endforeach()
  set(_QOLA_CONFIGURE_DEPENDS "")
  set(_QOLA_RESULT_VARIABLES "")
  set(_QOLA_WARNING "")
  include("${results}")
endmacro()

# Indents every line, so that CMake shows it as it is instead of re-wrapping it.
function(_qola_indent out text)
  string(STRIP "${text}" text)
  string(REPLACE "\n" "\n    " text "    ${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The qola-verify target: one step per qola_checkout() call, each running the
# script the last run of qola for that call wrote (QoLARun.cmake).
function(_qola_add_verify_target id script)
  add_custom_target(_qola_verify_${id}
    COMMAND "${CMAKE_COMMAND}" -P "${script}"
    COMMENT "qola: verifying the dependencies"
    VERBATIM USES_TERMINAL)
  if(NOT TARGET qola-verify)
    add_custom_target(qola-verify)
  endif()
  add_dependencies(qola-verify _qola_verify_${id})
endfunction()

# Notes this call among the configure's qola_checkout() calls, for qola to check that no
# two of them pin one folder to different commits before either moves it
# (QOLA_CMAKE_CALLS, QoLARun.cmake). The calls the last configure made, in the cache,
# stand for those still to come in this one: a call learns of a later one's pins before
# it moves anything. The cache keeps them until this configure's end, which forgets the
# calls no longer made (and a failed configure keeps them all).
function(_qola_note_call id manifest root deps groups)
  if(NOT DEFINED CACHE{_QOLA_CALL_${id}})
    # Fields percent-encoded where they hold what ends a field, an item or a line, or what
    # a CMake list would group or split by (the record travels in lists of VAR=value).
    set(record "")
    set(separator "")
    foreach(field IN ITEMS manifest root deps groups)
      string(REPLACE "%" "%25" value "${${field}}")
      string(REPLACE "|" "%7C" value "${value}")
      string(REPLACE "," "%2C" value "${value}")
      string(REPLACE "\n" "%0A" value "${value}")
      string(REPLACE "\r" "%0D" value "${value}")
      string(REPLACE "[" "%5B" value "${value}")
      string(REPLACE "]" "%5D" value "${value}")
      string(REPLACE "\\" "%5C" value "${value}")
      if(field MATCHES "^(deps|groups)$")
        string(REPLACE ";" "," value "${value}") # a list: its items
      else()
        string(REPLACE ";" "%3B" value "${value}")
      endif()
      string(APPEND record "${separator}${value}")
      set(separator "|")
    endforeach()
    set(_QOLA_CALL_${id} "${record}" CACHE INTERNAL "qola: a qola_checkout() call, for qola")
  endif()
  get_property(started GLOBAL PROPERTY _QOLA_MADE SET)
  if(NOT started)
    set_property(GLOBAL PROPERTY _QOLA_LAST "${_QOLA_CALLS}")
    set_property(GLOBAL PROPERTY _QOLA_MADE "")
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _qola_forget_calls_not_made)
  endif()
  get_property(made GLOBAL PROPERTY _QOLA_MADE)
  get_property(later GLOBAL PROPERTY _QOLA_LAST)
  list(APPEND made ${id})
  list(REMOVE_DUPLICATES made)
  set_property(GLOBAL PROPERTY _QOLA_MADE "${made}")
  list(REMOVE_ITEM later ${made})
  set(_QOLA_CALLS ${made} ${later} CACHE INTERNAL "qola: the last configure's qola_checkout() calls")
endfunction()

# At the end of a configure: the calls it made are the ones the next one expects.
function(_qola_forget_calls_not_made)
  get_property(made GLOBAL PROPERTY _QOLA_MADE)
  set(_QOLA_CALLS "${made}" CACHE INTERNAL "qola: the last configure's qola_checkout() calls")
endfunction()

# Stops the configure when `path` cannot be one item of a CMake list (the module passes
# qola's command line and environment as lists): a `;` splits it, an unmatched `[` or `]`
# joins it to the next item, `\;` loses its backslash.
function(_qola_require_list_item what path)
  set(items "${path};next")
  list(LENGTH items count)
  list(GET items 0 first)
  if(NOT count EQUAL 2 OR NOT first STREQUAL path)
    message(FATAL_ERROR "qola_checkout: the ${what} ${path} holds a `;`, or a `[` or `]` "
      "without its pair, which CMake cannot pass on to qola as it is; rename the folder")
  endif()
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
  set(quiet "")
  if(arg_QUIET)
    set(quiet QUIET)
  endif()

  # Before anything can fail: a fixed manifest must re-run configure.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
  foreach(what IN ITEMS manifest root)
    _qola_require_list_item(${what} "${${what}}")
  endforeach()
  _qola_require_list_item("build folder" "${CMAKE_BINARY_DIR}")

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

  _qola_note_call(${id} "${manifest}" "${root}" "${arg_DEPS}" "${arg_GROUPS}")
  _qola_python(python "${quiet}")
  _qola_require_list_item(interpreter "${python}")
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
    if(arg_OFFLINE OR QOLA_OFFLINE)
      list(APPEND command --offline)
    endif()
    if(arg_FORCE OR QOLA_FORCE)
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
      _qola_read_results()
      if("${_QOLA_FORMAT}" STREQUAL "${_QOLA_RESULTS_FORMAT}")
        _qola_stamp_holds(fast)
      endif()
    endif()
  endif()

  if(NOT fast)
    unset(_QOLA_KEY_${id} CACHE)
    if(NOT COMMAND _qola_run)
      include("${_QOLA_MODULE_DIR}/QoLARun.cmake")
    endif()
    _qola_run("${manifest}" "${results}" "${id}" "${quiet}" ${command})
    _qola_read_results()
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

  if(_QOLA_CONFIGURE_DEPENDS)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_QOLA_CONFIGURE_DEPENDS})
  endif()
  foreach(variable IN LISTS _QOLA_RESULT_VARIABLES)
    set(${variable} "${${variable}}" PARENT_SCOPE)
  endforeach()

  # One walk over the dependencies: the override setting of each (seeded from the
  # environment, then the cache decides; empty: check it out), and the summary.
  _qola_cmake_names(uppers "${QOLA_DEPENDENCIES}")
  set(lines "")
  set(overridden "")
  foreach(name upper IN ZIP_LISTS QOLA_DEPENDENCIES uppers)
    if(NOT DEFINED CACHE{QOLA_SOURCE_DIR_${upper}})
      set(QOLA_SOURCE_DIR_${upper} "$ENV{QOLA_SOURCE_DIR_${upper}}" CACHE PATH
        "qola: use this folder as it is for dependency ${name} (empty: check it out)")
    endif()
    if(NOT "${QOLA_SOURCE_DIR_${upper}}" STREQUAL "")
      string(APPEND lines "\n-- qola: ${name} overridden by ${QOLA_${upper}_SOURCE_DIR}")
      list(APPEND overridden ${name})
    endif()
  endforeach()
  list(LENGTH QOLA_DEPENDENCIES pinned)
  list(LENGTH overridden count)
  math(EXPR pinned "${pinned} - ${count}")

  if(NOT arg_QUIET)
    if(fast)
      # One message for all (each message() costs as much as a dozen other commands);
      # the lines look as if each had its own.
      file(RELATIVE_PATH shown "${CMAKE_SOURCE_DIR}" "${manifest}")
      set(count "${pinned} dependencies at their pins")
      if(pinned EQUAL 1)
        set(count "1 dependency at its pin")
      endif()
      if(pinned EQUAL 1 AND DEFINED _QOLA_SUMMARY_ONE)
        set(count "${_QOLA_SUMMARY_ONE}") # the caller's words for its one dependency
      endif()
      if(pinned GREATER 0)
        string(APPEND lines
          "\n-- qola: ${shown}: ${count}, unchanged since the last configure")
      endif()
      if(NOT lines STREQUAL "")
        string(SUBSTRING "${lines}" 4 -1 lines)
        message(STATUS "${lines}")
      endif()
    else()
      _qola_summary("${manifest}" "${_qola_stdout}" ${pinned})
    endif()
  endif()
  if(NOT QOLA_SKIP_CHECKOUT AND NOT "${_QOLA_WARNING}" STREQUAL "")
    _qola_indent(shown "${_QOLA_WARNING}")
    message(WARNING "qola: ${manifest}: a pin and the root's gitlink disagree:\n${shown}")
  endif()

  _qola_add_verify_target(${id} "${workdir}/verify-${id}.cmake")
endfunction()

cmake_policy(POP)
