# cmake -DSOURCE_DIR=... -DOUT=... -P write_build_commit.cmake: writes OUT, the definition of
# distdl::verify::build_commit(), with the commit SOURCE_DIR holds now ("unknown" outside git);
# rewritten only when that changes, so an unchanged commit recompiles nothing. Run at every
# build (verify/CMakeLists.txt): a report names the commit its program was built from.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit unknown)
endif()
string(CONCAT text "// Written by cmake/write_build_commit.cmake at build time.\n"
                   "#include \"verify/build_commit.hpp\"\n\n"
                   "const char* distdl::verify::build_commit() { return \"${commit}\"; }\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
