# qola: the part of QoLA.cmake that only a run of qola needs.
# SPDX-License-Identifier: MIT
#
# QoLA.cmake reads this file when qola_checkout() must start Python: to find the
# interpreter, run qola with the build's settings, show what it reports, and
# explain a failure. A configure whose stamp holds never reads it.

include_guard(GLOBAL)
cmake_policy(PUSH)
cmake_policy(VERSION 3.21)

# --- which Python -------------------------------------------------------------

# The site-packages folder of the installation that provided this module: the one
# that holds it (<site>/qola/cmake), or the one whose <prefix>/share/cmake/QoLA/ loaded
# it (the checkout of an editable install, say); empty for a qola source tree of no
# installation, or a copy of the module.
function(_qola_installation_site out)
  set(site "${_QOLA_INSTALLED_SITE}")
  if(site STREQUAL "" AND _QOLA_MODULE_DIR MATCHES "^(.+)/qola/cmake$")
    set(site "${CMAKE_MATCH_1}")
  endif()
  if(NOT site MATCHES "/lib(64)?/python[0-9.]*/(site|dist)-packages$")
    set(site "")
  endif()
  set(${out} "${site}" PARENT_SCOPE)
endfunction()

# The interpreter of the installation that provided this module (_qola_installation_site),
# in a virtual environment or not, active or not; "" when there is none.
function(_qola_installation_python out)
  set(found "")
  _qola_installation_site(site)
  if(site MATCHES "^(.+)/lib(64)?/python([0-9.]*)/(site|dist)-packages$")
    set(prefix "${CMAKE_MATCH_1}")
    set(version "${CMAKE_MATCH_3}")
    set(candidates "")
    if(EXISTS "${prefix}/pyvenv.cfg")
      list(APPEND candidates "${prefix}/bin/python") # a virtual environment's own
    endif()
    list(APPEND candidates "${prefix}/bin/python${version}" "${prefix}/bin/python3"
      "${prefix}/bin/python")
    if(prefix STREQUAL "/usr/local")
      # Debian's pip installs for /usr/bin's interpreter under /usr/local.
      list(APPEND candidates "/usr/bin/python${version}")
    endif()
    foreach(candidate IN LISTS candidates)
      if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
        set(found "${candidate}")
        break()
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Finds the interpreter for an empty QOLA_PYTHON and keeps it in the cache with what
# it was found from, so that the next configures start no interpreter to find it again.
# The installation's interpreter is taken as it is (its qola is the module's); from
# the other candidates, the first that can run qola (_qola_probe).
function(_qola_find_python out quiet)
  _qola_installation_python(python)
  if(NOT python STREQUAL "")
    _qola_installation_site(site)
    if("${_QOLA_INSTALLED_SITE}" STREQUAL "")
      set(how "the interpreter of the installation that provided ${_QOLA_MODULE_DIR}")
    else()
      string(REGEX REPLACE "/lib(64)?/python[0-9.]*/(site|dist)-packages$" "" prefix "${site}")
      set(how "the interpreter of the installation that provided ${prefix}/share/cmake/QoLA")
    endif()
  else()
    set(seen "")
    set(failures "")
    foreach(kind IN ITEMS Python_EXECUTABLE Python3_EXECUTABLE VIRTUAL_ENV CONDA_PREFIX Python3)
      set(candidate "")
      if(kind MATCHES "^Python3?_EXECUTABLE$")
        set(candidate "${${kind}}")
        set(how "${kind}")
      elseif(kind STREQUAL "VIRTUAL_ENV" AND EXISTS "$ENV{VIRTUAL_ENV}/bin/python"
          AND NOT "$ENV{VIRTUAL_ENV}" STREQUAL "")
        set(candidate "$ENV{VIRTUAL_ENV}/bin/python")
        set(how "the active virtual environment, VIRTUAL_ENV")
      elseif(kind STREQUAL "CONDA_PREFIX" AND EXISTS "$ENV{CONDA_PREFIX}/bin/python"
          AND NOT "$ENV{CONDA_PREFIX}" STREQUAL "")
        set(candidate "$ENV{CONDA_PREFIX}/bin/python")
        set(how "the active conda environment, CONDA_PREFIX")
      elseif(kind STREQUAL "Python3")
        find_package(Python3 COMPONENTS Interpreter QUIET)
        if(Python3_Interpreter_FOUND)
          set(candidate "${Python3_EXECUTABLE}")
          set(how "find_package(Python3)")
        endif()
      endif()
      if(candidate STREQUAL "" OR candidate IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${candidate}")
      _qola_probe(probe "${candidate}")
      if(probe_status STREQUAL "ok")
        set(python "${candidate}")
        break()
      endif()
      if(failures STREQUAL "")
        set(first "${candidate}")
        foreach(field IN ITEMS status version managed missing needed output)
          set(first_${field} "${probe_${field}}")
        endforeach()
      endif()
      _qola_probe_said(said probe)
      string(APPEND failures "    ${candidate} (${how}): ${said}\n")
    endforeach()
    if(python STREQUAL "")
      if(failures STREQUAL "")
        message(FATAL_ERROR
          "qola: no Python interpreter found to run qola.\n"
          "Tell CMake which one has qola installed:\n"
          "    cmake -DQOLA_PYTHON=/path/to/python \"${CMAKE_BINARY_DIR}\"")
      endif()
      _qola_explain("${first}" first "${failures}")
    endif()
    if(NOT failures STREQUAL "")
      string(REGEX REPLACE "\n$" "" failures "${failures}")
      string(REPLACE "\n    " "; " failures "${failures}")
      string(STRIP "${failures}" failures)
      string(APPEND how "; not ${failures}")
    endif()
    set(_QOLA_IMPORT_CHECKED "${python}|${_QOLA_MODULE_DIR}" CACHE INTERNAL
      "qola: interpreter known to run qola")
  endif()
  if(quiet STREQUAL "" AND NOT "${python}" STREQUAL "${_QOLA_PYTHON_FOUND}")
    message(STATUS "qola: Python ${python} (${how}; -DQOLA_PYTHON=... chooses another)")
  endif()
  # What it was found from, as QoLA.cmake's _qola_python compares it: after the search,
  # which may have set Python3_EXECUTABLE.
  set(inputs "${_QOLA_MODULE_DIR}|${_QOLA_INSTALLED_SITE}|${Python_EXECUTABLE}|${Python3_EXECUTABLE}")
  set(_QOLA_PYTHON_FOUND "${python}" CACHE INTERNAL "qola: the interpreter an empty QOLA_PYTHON means")
  set(_QOLA_PYTHON_INPUTS "${inputs}" CACHE INTERNAL "qola: what _QOLA_PYTHON_FOUND was found from")
  set(${out} "${python}" PARENT_SCOPE)
endfunction()

# The qola source tree this module belongs to (a checkout: cmake/ beside qola/), whose
# package qola runs from, or "" for an installed module.
function(_qola_source_tree out)
  get_filename_component(tree "${_QOLA_MODULE_DIR}" DIRECTORY)
  if(EXISTS "${tree}/qola/__init__.py" AND EXISTS "${tree}/pyproject.toml")
    set(${out} "${tree}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Runs the probe on python, in the environment qola would run in (a source tree on
# PYTHONPATH), and sets <prefix>_status in the caller's scope: ok, old (a Python before
# 3.10), missing (it lacks packages qola needs: <prefix>_missing, of <prefix>_needed, as
# requirements) or import (qola does not import: <prefix>_output says why); and
# <prefix>_version, <prefix>_managed (1: the system's, EXTERNALLY-MANAGED).
function(_qola_probe prefix python)
  # What the probe runs: the Python version, whether pip may install for it, the packages
  # qola needs that it lacks (qola/base/requirements.py; exit 5), then qola's command line
  # imported (a traceback when that fails).
  set(probe [=[
import os, sys, sysconfig
stdlib = sysconfig.get_path("stdlib") or ""
managed = sys.prefix == sys.base_prefix and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))
print("version %d.%d" % sys.version_info[:2])
print("managed %d" % managed)
if sys.version_info < (3, 10):
    sys.exit(5)
try:
    from qola.base.requirements import missing, needed
except ImportError:
    pass
else:
    gone = missing()
    print("needed " + " ".join(requirement for _, requirement in needed()))
    if gone:
        print("missing " + " ".join(gone))
        sys.exit(5)
import qola.cli
]=])
  # (Set here, not beside the functions: this file is read inside whichever function first
  # needs it, so a variable it sets lives in that function's scope alone.)
  _qola_source_tree(tree)
  set(saved "")
  if(NOT tree STREQUAL "")
    set(path "${tree}")
    if(NOT "$ENV{PYTHONPATH}" STREQUAL "")
      string(APPEND path ":$ENV{PYTHONPATH}")
    endif()
    _qola_set_environment("PYTHONPATH=${path}" saved)
  endif()
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/qola")
  execute_process(
    COMMAND "${python}" -c "${probe}"
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE stdout
    ERROR_VARIABLE stderr)
  _qola_restore_environment("${saved}")
  foreach(field IN ITEMS version managed missing needed)
    set(${field} "")
    if(stdout MATCHES "(^|\n)${field} ([^\n]*)")
      string(REPLACE " " ";" ${field} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(status EQUAL 0)
    set(result ok)
  elseif(status EQUAL 5 AND version VERSION_LESS 3.10 AND NOT version STREQUAL "")
    set(result old)
  elseif(status EQUAL 5 AND NOT missing STREQUAL "")
    set(result missing)
  else()
    set(result import)
  endif()
  string(STRIP "${stderr}" output)
  if(output STREQUAL "" AND status MATCHES "^[0-9]+$")
    set(output "exit ${status}")
  elseif(output STREQUAL "")
    set(output "${status}") # it did not start: why
  endif()
  set(${prefix}_status "${result}" PARENT_SCOPE)
  set(${prefix}_output "${output}" PARENT_SCOPE)
  foreach(field IN ITEMS version managed missing needed)
    set(${prefix}_${field} "${${field}}" PARENT_SCOPE)
  endforeach()
endfunction()

# The names of requirements (`GitPython` of `GitPython>=3.1.30`), as words: "a", "a and b",
# "a, b and c".
function(_qola_names out requirements)
  set(names "")
  foreach(requirement IN LISTS requirements)
    string(REGEX REPLACE "[<>=!~; ].*$" "" name "${requirement}")
    list(APPEND names "${name}")
  endforeach()
  list(POP_BACK names last)
  if(names STREQUAL "")
    set(${out} "${last}" PARENT_SCOPE)
  else()
    list(JOIN names ", " text)
    set(${out} "${text} and ${last}" PARENT_SCOPE)
  endif()
endfunction()

# One line's worth of why a probe (its fields under prefix) failed.
function(_qola_probe_said out prefix)
  if(${prefix}_status STREQUAL "old")
    set(said "Python ${${prefix}_version}, and qola needs 3.10 or newer")
  elseif(${prefix}_status STREQUAL "missing")
    _qola_names(names "${${prefix}_missing}")
    list(LENGTH ${prefix}_missing count)
    if(count EQUAL 1)
      set(said "${names} is not installed for it")
    else()
      set(said "${names} are not installed for it")
    endif()
  else()
    string(STRIP "${${prefix}_output}" said)
    string(REGEX REPLACE "^.*\n" "" said "${said}") # a traceback's last line
    set(said "cannot import qola (${said})")
  endif()
  set(${out} "${said}" PARENT_SCOPE)
endfunction()

# Fails with what to run when python cannot run qola. A success is remembered per
# interpreter and module, so a configure pays for it once.
function(_qola_check_python python)
  if("${_QOLA_IMPORT_CHECKED}" STREQUAL "${python}|${_QOLA_MODULE_DIR}")
    return()
  endif()
  _qola_probe(probe "${python}")
  if(NOT probe_status STREQUAL "ok")
    _qola_explain("${python}" probe "")
  endif()
  set(_QOLA_IMPORT_CHECKED "${python}|${_QOLA_MODULE_DIR}" CACHE INTERNAL
    "qola: interpreter known to run qola")
endfunction()

# A path as a double-quoted shell word a person can paste: `\`, `"`, `$` and a backquote
# escaped, so that no folder name can end the word or run a command.
function(_qola_shell_quoted out path)
  string(REGEX REPLACE "([\\\"$`])" "\\\\\\1" path "${path}")
  set(${out} "\"${path}\"" PARENT_SCOPE)
endfunction()

# A word of a command line a person can paste: as it is when the shell reads it so,
# else double-quoted.
function(_qola_shell_word out word)
  if(NOT word MATCHES "^[-A-Za-z0-9_./=:,+@%]+$")
    _qola_shell_quoted(word "${word}")
  endif()
  set(${out} "${word}" PARENT_SCOPE)
endfunction()

# The FATAL_ERROR for an interpreter that cannot run qola (its probe's fields under
# prefix): what it lacks and the lines that install it, or which interpreter has qola.
# tried: one line per interpreter looked at, when several were.
function(_qola_explain python prefix tried)
  _qola_shell_quoted(build "${CMAKE_BINARY_DIR}")
  _qola_shell_quoted(run "${python}")
  _qola_source_tree(tree)
  set(also "")
  string(REGEX MATCHALL "\n" lines "${tried}")
  list(LENGTH lines count)
  if(count GREATER 1)
    set(also "The interpreters looked at, in order:\n${tried}")
  endif()
  set(venv_lines "")
  if(NOT tree STREQUAL "")
    _qola_shell_quoted(venv "${CMAKE_BINARY_DIR}/qola-venv")
    _qola_shell_quoted(venv_python "${CMAKE_BINARY_DIR}/qola-venv/bin/python")
    _qola_shell_quoted(source "${tree}")
    string(CONCAT venv_lines
      "    ${run} -m venv ${venv}\n"
      "    ${venv_python} -m pip install ${source}\n"
      "    cmake -DQOLA_PYTHON=${venv_python} ${build}\n")
  endif()
  if(${prefix}_status STREQUAL "old")
    message(FATAL_ERROR
      "qola: ${python} is Python ${${prefix}_version}, and qola needs Python 3.10 or "
      "newer.\n${also}Set QOLA_PYTHON to one that has qola's packages (click, GitPython, "
      "tomli-w):\n    cmake -DQOLA_PYTHON=/path/to/python3 ${build}")
  endif()
  if(${prefix}_status STREQUAL "missing")
    _qola_names(lacks "${${prefix}_missing}")
    _qola_names(needs "${${prefix}_needed}")
    list(LENGTH ${prefix}_missing count)
    set(it it)
    set(is is)
    if(count GREATER 1)
      set(it them)
      set(is are)
    endif()
    set(words "")
    foreach(requirement IN LISTS ${prefix}_missing)
      _qola_shell_quoted(word "${requirement}")
      string(APPEND words " ${word}")
    endforeach()
    set(from "")
    if(NOT tree STREQUAL "")
      set(from " from ${tree}")
    endif()
    if(${prefix}_managed STREQUAL "1" AND NOT tree STREQUAL "")
      string(CONCAT advice "${python} is managed by the system (EXTERNALLY-MANAGED): give "
        "qola a virtual environment of its own, once:\n${venv_lines}")
    else()
      string(CONCAT advice "Install ${it} for that interpreter:\n"
        "    ${run} -m pip install${words}\n")
      if(NOT tree STREQUAL "")
        string(APPEND advice "or give qola a virtual environment of its own, once:\n"
          "${venv_lines}")
      endif()
    endif()
    message(FATAL_ERROR
      "qola: ${python} cannot run qola${from}: ${lacks} ${is} not installed for it "
      "(qola needs ${needs}).\n${also}${advice}"
      "or set QOLA_PYTHON to an interpreter that has ${it}.")
  endif()
  # qola itself does not import.
  _qola_indent(shown "${${prefix}_output}")
  if(NOT tree STREQUAL "")
    message(FATAL_ERROR
      "qola: ${python} cannot run qola from ${tree}:\n${shown}\n${also}"
      "Give qola a virtual environment of its own, once:\n${venv_lines}"
      "or set QOLA_PYTHON to an interpreter that can.")
  endif()
  set(advice "")
  _qola_installation_python(installed)
  if(NOT installed STREQUAL "" AND NOT installed STREQUAL python)
    _qola_shell_quoted(word "${installed}")
    string(APPEND advice "qola is installed for ${installed}, whose installation provided "
      "${_QOLA_MODULE_DIR}/QoLAConfig.cmake; use it:\n"
      "    cmake -DQOLA_PYTHON=${word} ${build}\n")
  else()
    find_program(script NAMES qola NO_CACHE)
    if(script)
      file(STRINGS "${script}" first LIMIT_COUNT 1)
      if(first MATCHES "^#! *([^ ]+)$" AND NOT CMAKE_MATCH_1 STREQUAL python)
        _qola_shell_quoted(word "${CMAKE_MATCH_1}")
        string(APPEND advice "The qola on PATH, ${script}, runs ${CMAKE_MATCH_1}; use it:\n"
          "    cmake -DQOLA_PYTHON=${word} ${build}\n")
      endif()
    endif()
  endif()
  # qola is not on PyPI (anyone may register the name): install it from where this
  # installation came from when pip recorded it, else from a checkout or qola's git URL.
  _qola_installed_from(source)
  if(NOT source STREQUAL "")
    _qola_shell_quoted(source "${source}")
    string(CONCAT install "Or install qola for that interpreter from where this one came "
      "from:\n    ${run} -m pip install ${source}\n")
  else()
    string(CONCAT install "Or install qola for that interpreter, from a checkout of qola or "
      "its git URL (qola is not on PyPI):\n"
      "    ${run} -m pip install /path/to/qola\n"
      "    ${run} -m pip install \"git+<qola's repository URL>\"\n")
  endif()
  message(FATAL_ERROR
    "qola: ${python}: cannot import qola:\n${shown}\n${also}${advice}${install}"
    "or set QOLA_PYTHON to an interpreter that has it.")
endfunction()

# What pip installed the qola that provided this module from (PEP 610's direct_url.json
# in its dist-info): git+URL, or a file:// URL of a folder; "" when unknown.
function(_qola_installed_from out)
  set(found "")
  _qola_installation_site(site)
  if(NOT site STREQUAL "")
    file(GLOB records "${site}/qola-*.dist-info/direct_url.json")
  else()
    set(records "")
  endif()
  list(LENGTH records count)
  if(count EQUAL 1)
    file(READ "${records}" record)
    string(JSON url ERROR_VARIABLE failed GET "${record}" url)
    if(failed STREQUAL "NOTFOUND" AND NOT url STREQUAL "")
      string(JSON vcs ERROR_VARIABLE failed GET "${record}" vcs_info vcs)
      if(failed STREQUAL "NOTFOUND" AND vcs STREQUAL "git")
        set(found "git+${url}")
      else()
        set(found "${url}") # pip takes a file:// URL as it is
      endif()
    endif()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# --- running qola ---------------------------------------------------------------

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
      _qola_require_list_item(${variable} "${dir}")
      list(APPEND pairs "${variable}=${dir}")
    endif()
  endforeach()
  set(${out} "${pairs}" PARENT_SCOPE)
endfunction()

# The environment qola runs in, as VAR=value pairs (VAR= unsets VAR): CMake's
# settings are passed as options, so the same variables of whoever started CMake
# are cleared; the overrides CMake defines win over the environment's; a source
# tree lends its package.
function(_qola_environment out)
  set(pairs QOLA_MANIFEST= QOLA_ROOT= QOLA_SAFE_DIRECTORY= QOLA_OFFLINE= QOLA_FORCE=)
  _qola_overrides(overrides)
  list(APPEND pairs ${overrides})
  _qola_source_tree(tree)
  if(NOT tree STREQUAL "")
    _qola_require_list_item("qola source tree" "${tree}")
    if("$ENV{PYTHONPATH}" STREQUAL "")
      list(APPEND pairs "PYTHONPATH=${tree}")
    else()
      list(APPEND pairs "PYTHONPATH=${tree}:$ENV{PYTHONPATH}")
    endif()
  endif()
  set(${out} "${pairs}" PARENT_SCOPE)
endfunction()

# Sets (or, for VAR=, unsets) each variable, saving what was there in `saved`.
function(_qola_set_environment pairs saved)
  set(before "")
  foreach(pair IN LISTS pairs)
    string(FIND "${pair}" "=" eq)
    string(SUBSTRING "${pair}" 0 ${eq} variable)
    math(EXPR eq "${eq} + 1")
    string(SUBSTRING "${pair}" ${eq} -1 value)
    if(DEFINED ENV{${variable}})
      list(APPEND before "${variable}=$ENV{${variable}}")
    else()
      list(APPEND before "${variable}")
    endif()
    if(value STREQUAL "")
      unset(ENV{${variable}})
    else()
      set(ENV{${variable}} "${value}")
    endif()
  endforeach()
  set(${saved} "${before}" PARENT_SCOPE)
endfunction()

function(_qola_restore_environment saved)
  list(REVERSE saved) # a variable set twice gets its first value back last
  foreach(entry IN LISTS saved)
    string(FIND "${entry}" "=" eq)
    if(eq EQUAL -1)
      unset(ENV{${entry}})
    else()
      string(SUBSTRING "${entry}" 0 ${eq} variable)
      math(EXPR eq "${eq} + 1")
      string(SUBSTRING "${entry}" ${eq} -1 value)
      set(ENV{${variable}} "${value}")
    endif()
  endforeach()
endfunction()

function(_qola_exit_meaning out status)
  if(status EQUAL 1)
    set(text "the dependencies do not match the manifest")
  elseif(status EQUAL 2)
    set(text "the manifest or the command line is invalid")
  elseif(status EQUAL 3)
    set(text "a git operation failed")
  elseif(status EQUAL 4)
    string(CONCAT text "refused: local work would be lost, or a folder is not a repository "
      "git accepts; nothing was changed")
  elseif(status EQUAL 5)
    set(text "the Python running qola lacks a package qola needs; nothing was changed")
  elseif(status EQUAL 129)
    set(text "hung up (SIGHUP)")
  elseif(status EQUAL 130)
    set(text "interrupted")
  elseif(status EQUAL 143)
    set(text "terminated (SIGTERM)")
  else()
    set(${out} "${status}" PARENT_SCOPE)
    return()
  endif()
  set(${out} "exit ${status}: ${text}" PARENT_SCOPE)
endfunction()

# A CMake quoted argument whose value is exactly text: every character that would end
# it, expand or be read otherwise (a bracket argument would lose a carriage return and a
# leading newline) escaped, as qola/output/cmake_results.py's cmake_quote does for the results file.
function(_qola_quote out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "$" "\\$" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\r" "\\r" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# Writes (when it changed) the script the qola-verify step of one call runs: `qola
# verify` with the manifest, settings and environment of the checkout just run.
function(_qola_write_verify_script script manifest environment)
  # Every value goes in through _qola_quote, never pasted raw into a comment or an
  # argument, where a path's quote, `$` or newline would end it or add code.
  _qola_quote(shown "qola verify: ${manifest}: exit ")
  set(text "# Generated by QoLA.cmake: `qola verify` as the last configure ran qola on the\n")
  string(APPEND text "# manifest below, with its settings and environment.\n")
  string(APPEND text "set(failed ${shown})\n")
  foreach(pair IN LISTS environment)
    string(FIND "${pair}" "=" eq)
    string(SUBSTRING "${pair}" 0 ${eq} variable)
    math(EXPR eq "${eq} + 1")
    string(SUBSTRING "${pair}" ${eq} -1 value)
    if(value STREQUAL "")
      string(APPEND text "unset(ENV{${variable}})\n")
    else()
      _qola_quote(value "${value}")
      string(APPEND text "set(ENV{${variable}} ${value})\n")
    endif()
  endforeach()
  # The checkout's command line, as verify: the same options but those of a checkout.
  set(words "")
  set(skip FALSE)
  set(at 0)
  foreach(word IN LISTS ARGN)
    if(skip)
      set(skip FALSE)
    elseif(word STREQUAL "--cmake-out")
      set(skip TRUE)
    elseif(NOT word MATCHES "^--(offline|force)$")
      if(at EQUAL 3)
        set(word verify) # python -m qola.cli <checkout>
      endif()
      _qola_quote(word "${word}")
      string(APPEND words " ${word}")
    endif()
    math(EXPR at "${at} + 1")
  endforeach()
  _qola_quote(workdir "${CMAKE_BINARY_DIR}/qola")
  string(APPEND text "execute_process(COMMAND${words}\n"
    "  WORKING_DIRECTORY ${workdir} RESULT_VARIABLE status)\n"
    "if(NOT status EQUAL 0)\n"
    "  message(FATAL_ERROR \"\${failed}\${status}\")\n"
    "endif()\n")
  if(EXISTS "${script}")
    file(READ "${script}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${script}" "${text}")
endfunction()

# QOLA_CMAKE_CALLS for the call `id` (qola/output/cmake_calls.py): the records (_qola_note_call)
# of the calls made earlier in this configure, then of those the last one made after them.
function(_qola_other_calls out id)
  get_property(made GLOBAL PROPERTY _QOLA_MADE)
  get_property(later GLOBAL PROPERTY _QOLA_LAST)
  list(REMOVE_ITEM later ${made})
  set(lines "")
  foreach(when IN ITEMS earlier later)
    set(ids ${later})
    if(when STREQUAL "earlier")
      set(ids ${made})
    endif()
    foreach(other IN LISTS ids)
      if(NOT other STREQUAL id AND DEFINED CACHE{_QOLA_CALL_${other}})
        string(APPEND lines "${when}|${_QOLA_CALL_${other}}\n")
      endif()
    endforeach()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# Runs qola (ARGN: the command line) for one qola_checkout() call, showing what it
# reports on stderr as it goes (unless quiet). On success sets _qola_stdout in the
# caller and writes the call's verify script; on failure stops the configure with
# what qola said that is not on the screen already.
function(_qola_run manifest results id quiet)
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/qola")
  list(GET ARGN 0 python)
  _qola_check_python("${python}")
  _qola_environment(environment)
  # Tell qola it runs under CMake (its hints then speak CMake), and the build's other
  # qola_checkout() calls, whose pins it must not contradict.
  _qola_other_calls(calls "${id}")
  set(settings "QOLA_CMAKE_BINARY_DIR=${CMAKE_BINARY_DIR}" "QOLA_CMAKE_CALLS=${calls}")
  _qola_set_environment("${environment};${settings}" saved)

  set(echo ECHO_ERROR_VARIABLE)
  if(NOT quiet STREQUAL "")
    set(echo "")
  endif()
  execute_process(
    COMMAND ${ARGN}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}/qola"
    RESULT_VARIABLE status
    OUTPUT_VARIABLE stdout
    ERROR_VARIABLE stderr
    ${echo})
  _qola_restore_environment("${saved}")

  set(output "${stdout}${stderr}")
  # What qola said that is not on the screen yet, for a message to show once: stdout (its
  # results, and under CMake a failure's report, qola/base/console.py's report()), and stderr
  # too when it was not shown live (QUIET).
  set(unshown "${stdout}")
  if(NOT quiet STREQUAL "")
    set(unshown "${stderr}${stdout}")
  endif()
  _qola_said(said "${unshown}")
  if(status EQUAL 0 OR (QOLA_SKIP_CHECKOUT AND status EQUAL 1))
    if(status EQUAL 1)
      message(WARNING
        "qola: ${manifest}: the dependencies do not match the manifest. "
        "QOLA_SKIP_CHECKOUT is ON, so they were left as they are${said}")
      set(stdout "") # shown in the warning: not again as the summary
    endif()
    if(NOT EXISTS "${results}")
      message(FATAL_ERROR "qola: ${python} -m qola.cli did not write ${results}${said}")
    endif()
    _qola_write_verify_script("${CMAKE_BINARY_DIR}/qola/verify-${id}.cmake" "${manifest}"
      "${environment}" ${ARGN})
    set(_qola_stdout "${stdout}" PARENT_SCOPE)
    return()
  endif()
  if(status EQUAL 5 OR output MATCHES "No module named")
    # qola (or a package it needs) went away since the last check: say what to install.
    set(_QOLA_IMPORT_CHECKED "" CACHE INTERNAL "")
    _qola_check_python("${python}")
  endif()
  _qola_exit_meaning(meaning "${status}")
  set(command "")
  foreach(word IN LISTS ARGN)
    _qola_shell_word(word "${word}")
    string(APPEND command " ${word}")
  endforeach()
  _qola_source_tree(tree)
  if(NOT tree STREQUAL "")
    _qola_shell_word(tree "${tree}")
    string(PREPEND command " PYTHONPATH=${tree}")
  endif()
  string(SUBSTRING "${command}" 1 -1 command)
  message(FATAL_ERROR
    "qola: ${manifest}: checkout failed (${meaning})${said}\n"
    "The command was:\n"
    "    ${command}")
endfunction()

# ":" and the text, indented; or, when there is none, where to look instead.
function(_qola_said out text)
  string(STRIP "${text}" text)
  if(text STREQUAL "")
    set(${out} "; what qola printed is above" PARENT_SCOPE)
  else()
    _qola_indent(shown "${text}")
    set(${out} ":\n${shown}" PARENT_SCOPE)
  endif()
endfunction()

# What a run reported, as STATUS lines: each dependency qola changed, that is overridden
# or being developed, then one line for those at their pins (each a VERBOSE line).
function(_qola_summary manifest stdout pinned)
  string(REGEX REPLACE "\n$" "" stdout "${stdout}")
  string(REPLACE ";" "\\;" stdout "${stdout}")
  string(REPLACE "\n" ";" lines "${stdout}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^qola: ")
      string(PREPEND line "qola: ")
    endif()
    if(line MATCHES " up to date$" AND NOT QOLA_SKIP_CHECKOUT)
      message(VERBOSE "${line}")
    elseif(line MATCHES " [0-9a-f]+ developing( at |, )")
      # `qola develop`: used as the developer has it, not at its pin.
      message(STATUS "${line}")
      math(EXPR pinned "${pinned} - 1")
    else()
      message(STATUS "${line}")
    endif()
  endforeach()
  if(NOT QOLA_SKIP_CHECKOUT AND pinned GREATER 0)
    file(RELATIVE_PATH shown "${CMAKE_SOURCE_DIR}" "${manifest}")
    set(count "${pinned} dependencies at their pins")
    if(pinned EQUAL 1)
      set(count "1 dependency at its pin")
    endif()
    if(pinned EQUAL 1 AND DEFINED _QOLA_SUMMARY_ONE)
      set(count "${_QOLA_SUMMARY_ONE}") # the caller's words for its one dependency
    endif()
    message(STATUS "qola: ${shown}: ${count}")
  endif()
endfunction()

cmake_policy(POP)
