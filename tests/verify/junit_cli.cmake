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

# A report folder that cannot be made (a file is in its place) fails the run, but the JUnit file
# is still written: a stale one of an earlier run must not pass for this one's.
get_filename_component(out_dir ${OUT} DIRECTORY)
file(WRITE ${out_dir}/blocker "")
file(REMOVE ${OUT})
execute_process(COMMAND ${VERIFY} --junit ${OUT} --report ${out_dir}/blocker ${CASES}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
if(NOT status EQUAL 1 OR NOT errors MATCHES "cannot create the report folder" OR NOT EXISTS ${OUT})
  message(FATAL_ERROR "an unwritable --report: exit ${status} (expected 1), JUnit written: ${OUT}\n${output}${errors}")
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
