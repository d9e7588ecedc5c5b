# ctest fixture: a fresh `cmake --install` of the build tree BUILD_DIR into PREFIX.
#   cmake -DBUILD_DIR=... -DPREFIX=... -P install_package.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${status})")
endif()
# Private helpers stay private: nothing under a detail/ folder is installed.
file(GLOB_RECURSE private_headers ${PREFIX}/include/distdl/*/detail/*)
if(private_headers)
  message(FATAL_ERROR "private headers were installed: ${private_headers}")
endif()
message(STATUS "installed ${BUILD_DIR} into ${PREFIX}")
