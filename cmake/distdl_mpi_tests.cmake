# How the test suite runs MPI programs (tests/ and bench/): the environment of every MPI run,
# and distdl_add_mpi_test(NAME RANKS LIMIT COMMAND...) (distdl_add_wrapped_mpi_test: the same
# under a judging script), which ends a job that outlives LIMIT seconds (scaled under
# sanitizers) with `timeout --kill-after`, so that no deadlock under MPI can hang the suite (see
# tests/CMakeLists.txt).
#
# Shared-memory copies without cross-process memory access, which containers often forbid.
set(DISTDL_MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none)
# Open MPI keeps global state to the end (LeakSanitizer would report it as leaks) and its TCP
# transport takes two of its own locks in both orders (ThreadSanitizer reports a potential
# deadlock): silence exactly those, for MPI runs only.
if(DISTDL_SANITIZER STREQUAL "address")
  list(APPEND DISTDL_MPI_ENV ASAN_OPTIONS=detect_leaks=0)
elseif(DISTDL_SANITIZER STREQUAL "thread")
  list(APPEND DISTDL_MPI_ENV TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/mpi_backend/openmpi.tsan.supp)
endif()

find_program(DISTDL_TIMEOUT_EXECUTABLE timeout REQUIRED)
set(DISTDL_MPI_KILL_AFTER 5)
if(DISTDL_SANITIZER STREQUAL "thread")
  set(DISTDL_TEST_TIME_SCALE 10)
elseif(DISTDL_SANITIZER STREQUAL "address" OR CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(DISTDL_TEST_TIME_SCALE 4)
else()
  set(DISTDL_TEST_TIME_SCALE 1)
endif()
# The mpiexec command line of an MPI test, ended after `limit` seconds (not scaled).
function(distdl_mpi_command out ranks limit)
  set(${out} ${DISTDL_TIMEOUT_EXECUTABLE} --kill-after=${DISTDL_MPI_KILL_AFTER} ${limit} ${MPIEXEC_EXECUTABLE}
      --oversubscribe ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${ARGN} PARENT_SCOPE)
endfunction()
# The same with the job's whole command line handed to WRAPPER (a script that judges how the job
# ended, or what it left behind):
#   distdl_add_wrapped_mpi_test(NAME RANKS LIMIT WRAPPER word... COMMAND word...)
function(distdl_add_wrapped_mpi_test name ranks limit)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "WRAPPER;COMMAND")
  math(EXPR scaled "${limit} * ${DISTDL_TEST_TIME_SCALE}")
  distdl_mpi_command(command ${ranks} ${scaled} ${arg_COMMAND})
  add_test(NAME ${name} COMMAND ${arg_WRAPPER} ${command})
  math(EXPR ctest_limit "${scaled} + ${DISTDL_MPI_KILL_AFTER} + 30")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ctest_limit} ENVIRONMENT "${DISTDL_MPI_ENV}")
endfunction()
function(distdl_add_mpi_test name ranks limit)
  distdl_add_wrapped_mpi_test(${name} ${ranks} ${limit} COMMAND ${ARGN})
endfunction()
# Scaled ctest TIMEOUT for a test that does not run under mpiexec.
function(distdl_test_timeout name limit)
  math(EXPR scaled "${limit} * ${DISTDL_TEST_TIME_SCALE}")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${scaled})
endfunction()
