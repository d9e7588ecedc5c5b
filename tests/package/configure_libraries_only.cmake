# The libraries alone configure with tests and benchmarks off, and with GoogleTest, Google
# Benchmark and xtensor-blas made unfindable: they need none of them.
#   cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DGENERATOR=... -DCXX=... -P configure_libraries_only.cmake
file(REMOVE_RECURSE ${BINARY_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
                        -DBUILD_TESTING=OFF -DDISTDL_BUILD_BENCHMARKS=OFF
                        -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
                        -DCMAKE_DISABLE_FIND_PACKAGE_xtensor-blas=ON
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the libraries alone do not configure without the test and benchmark packages (${status})")
endif()
