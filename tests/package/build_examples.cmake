# ctest fixture: configures and builds examples/ as an outside project against the package
# installed in PREFIX (find_package(distdl CONFIG REQUIRED) and nothing else).
#   cmake -DSOURCE_DIR=examples -DBINARY_DIR=... -DPREFIX=... -DGENERATOR=... -DCXX=... -DBUILD_TYPE=... -P build_examples.cmake
file(REMOVE_RECURSE ${BINARY_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
                        -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE_DIR} against the package in ${PREFIX} failed (${status})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} -j 2 RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building ${SOURCE_DIR} against the package in ${PREFIX} failed (${status})")
endif()
# It must have been this package, not another one somewhere on the system.
file(STRINGS ${BINARY_DIR}/CMakeCache.txt distdl_dir REGEX "^distdl_DIR:")
string(FIND "${distdl_dir}" "${PREFIX}/" at)
if(NOT at GREATER -1)
  message(FATAL_ERROR "the examples found distdl elsewhere: ${distdl_dir}")
endif()
