# distdl-verify --junit end to end: a case folder plus one broken file. The run must exit 1,
# and the XML must hold one <testcase> per case file, exactly one <failure> (the broken file,
# under its folder's classname: the folder below ROOT, the one the two folders share) and the
# passing cases as empty testcases.
#   cmake -DVERIFY=.../distdl-verify -DCASES=cases/broadcast -DBROKEN=.../not_json.json -DROOT=... -DOUT=...
#         -P junit_cli.cmake
file(REMOVE ${OUT})
execute_process(COMMAND ${VERIFY} --junit ${OUT} ${CASES} ${BROKEN} RESULT_VARIABLE status OUTPUT_VARIABLE output)
if(NOT status EQUAL 1)
  message(FATAL_ERROR "distdl-verify with a broken case file exited ${status}, expected 1:\n${output}")
endif()
file(READ ${OUT} xml)
file(GLOB case_files ${CASES}/*.json)
list(LENGTH case_files case_count)
math(EXPR expected_cases "${case_count} + 1")
string(REGEX MATCHALL "<testcase " testcases "${xml}")
list(LENGTH testcases testcase_count)
string(REGEX MATCHALL "<failure " failures "${xml}")
list(LENGTH failures failure_count)
if(NOT testcase_count EQUAL expected_cases)
  message(FATAL_ERROR "${testcase_count} <testcase> elements for ${expected_cases} cases:\n${xml}")
endif()
if(NOT failure_count EQUAL 1)
  message(FATAL_ERROR "${failure_count} <failure> elements, expected 1 (the broken file):\n${xml}")
endif()
if(NOT xml MATCHES "<testsuites name=\"distdl-verify \\(sim\\)\" tests=\"${expected_cases}\" failures=\"1\" errors=\"0\" skipped=\"0\"")
  message(FATAL_ERROR "the <testsuites> counts do not match the run:\n${xml}")
endif()
get_filename_component(broken_name ${BROKEN} NAME)
get_filename_component(broken_dir ${BROKEN} DIRECTORY)
file(RELATIVE_PATH broken_folder ${ROOT} ${broken_dir})
if(NOT xml MATCHES "<testcase classname=\"${broken_folder}\" name=\"${broken_name}\" time=\"[0-9.]+\">\n *<failure message=\"[^\"]*invalid JSON")
  message(FATAL_ERROR "the broken file is not a <failure> named ${broken_folder} / ${broken_name}:\n${xml}")
endif()
file(RELATIVE_PATH cases_folder ${ROOT} ${CASES})
string(REGEX MATCHALL "<testcase classname=\"${cases_folder}\" name=\"[^\"]+\" time=\"[0-9.]+\"/>" passed "${xml}")
list(LENGTH passed passed_count)
if(NOT passed_count EQUAL case_count)
  message(FATAL_ERROR "${passed_count} passing <testcase> elements under ${cases_folder}, expected ${case_count}:\n${xml}")
endif()
message(STATUS "${OUT}: ${testcase_count} testcases, 1 failure, as expected")

# Output paths that cannot be used are refused before any case runs (exit 2), not found out after
# the run: a report folder that cannot be made (a file is in its place), a --junit path that is a
# folder, and a --junit file that --report would overwrite.
get_filename_component(out_dir ${OUT} DIRECTORY)
file(WRITE ${out_dir}/blocker "")
set(reports ${out_dir}/reports)
foreach(refused "--report;${out_dir}/blocker/reports;is not a folder that can be made"
                "--junit;${out_dir};is a folder"
                "--junit;${reports}/verify.json;is the report verify.json that --report")
  list(GET refused 0 option)
  list(GET refused 1 path)
  list(GET refused 2 expected)
  set(report_option --report ${reports})
  if(option STREQUAL "--report")
    set(report_option "")
  endif()
  execute_process(COMMAND ${VERIFY} ${option} ${path} ${report_option} ${CASES}
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  string(FIND "${errors}" "${option} ${path} ${expected}" said)  # literally: the path may hold regex characters
  if(NOT status EQUAL 2 OR said EQUAL -1 OR output MATCHES "PASS")
    message(FATAL_ERROR "${option} ${path}: exit ${status} (expected 2, before any case ran):\n${output}${errors}")
  endif()
endforeach()

# A --random-out file that cannot be written (a folder is in its place) is said and fails the run.
file(MAKE_DIRECTORY ${out_dir}/random/random_5_0.json)
execute_process(COMMAND ${VERIFY} --random 2 --seed 5 --random-out ${out_dir}/random
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
# Exit 1 for the file alone: both cases ran and passed.
if(NOT status EQUAL 1 OR NOT errors MATCHES "cannot write [^\n]*random_5_0.json" OR output MATCHES "FAIL"
   OR NOT output MATCHES "total +2 +0 +0")
  message(FATAL_ERROR "an unwritable --random-out file: exit ${status} (expected 1, both cases passing):\n"
                      "${output}${errors}")
endif()

# An output path given empty (an unset variable in a CI script) is a usage error, not ignored.
foreach(option --junit --report --random-out)
  execute_process(COMMAND ${VERIFY} ${option} "" ${CASES} RESULT_VARIABLE status ERROR_VARIABLE errors OUTPUT_QUIET)
  if(NOT status EQUAL 2 OR NOT errors MATCHES "${option} needs a path, not an empty one")
    message(FATAL_ERROR "${option} \"\": exit ${status} (expected 2):\n${errors}")
  endif()
endforeach()
# A file that cannot be used and that --filter leaves out (its case name is unknown) is named, not
# dropped without a word; the run goes on with the cases the filter matches.
execute_process(COMMAND ${VERIFY} --filter broadcast/ ${CASES} ${BROKEN}
                RESULT_VARIABLE status ERROR_VARIABLE errors OUTPUT_QUIET)
if(NOT status EQUAL 0 OR NOT errors MATCHES "--filter left out 1 case file\\(s\\) that cannot be used: [^\n]*not_json.json")
  message(FATAL_ERROR "--filter leaving out the broken file: exit ${status} (expected 0):\n${errors}")
endif()
message(STATUS "an unwritable --report leaves the JUnit file written; empty output paths are refused; --filter names "
               "the unusable files it leaves out")
