# Installation of the libraries as a CMake package (find_package(distdl CONFIG)).
#
# Layout under the prefix:
#   include/distdl/<module>/*.hpp     public headers; consumers get include/distdl on their include
#                                     path, so `#include "core/broadcast.hpp"` reads as in the tree
#   lib/libdistdl_<module>.a          the libraries
#   lib/cmake/distdl/                 distdl-config.cmake, its version file, the exported targets
#   bin/distdl-verify                 the case runner
# Only a module folder's top-level headers are public: <module>/detail/ and other subfolders
# are private and never installed.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DISTDL_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/distdl)
set(DISTDL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/distdl)

# distdl_install_module(<target> <folder>): installs library <target> (distdl_<name>, exported as
# distdl::<name>) and the top-level headers of source folder <folder>. Call it at the end of the
# module's CMakeLists.txt, after its target_* calls.
function(distdl_install_module target folder)
  string(REGEX REPLACE "^distdl_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  # Include directories given as source-tree paths hold only in the build tree; the installed
  # target gets the installed header root instead.
  get_target_property(includes ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(includes)
    set(build_only_includes "")
    foreach(dir IN LISTS includes)
      if(dir MATCHES "^\\$<")
        list(APPEND build_only_includes "${dir}")
      else()
        list(APPEND build_only_includes "$<BUILD_INTERFACE:${dir}>")
      endif()
    endforeach()
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${build_only_includes}")
  endif()
  install(TARGETS ${target} EXPORT distdl-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${DISTDL_INSTALL_INCLUDEDIR})
  file(GLOB headers ${PROJECT_SOURCE_DIR}/${folder}/*.hpp)
  install(FILES ${headers} DESTINATION ${DISTDL_INSTALL_INCLUDEDIR}/${folder})
  set_property(GLOBAL APPEND PROPERTY DISTDL_INSTALLED_MODULES ${export_name})
endfunction()

# distdl_install_package(): the exported targets and the package config. Call once, after every
# module's add_subdirectory.
function(distdl_install_package)
  install(TARGETS distdl_build_flags EXPORT distdl-targets)
  install(EXPORT distdl-targets NAMESPACE distdl:: FILE distdl-targets.cmake DESTINATION ${DISTDL_INSTALL_CMAKEDIR})
  get_property(DISTDL_INSTALLED_MODULES GLOBAL PROPERTY DISTDL_INSTALLED_MODULES)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/distdl-config.cmake.in
                                ${PROJECT_BINARY_DIR}/distdl-config.cmake
                                INSTALL_DESTINATION ${DISTDL_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/distdl-config-version.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/distdl-config.cmake ${PROJECT_BINARY_DIR}/distdl-config-version.cmake
          DESTINATION ${DISTDL_INSTALL_CMAKEDIR})
endfunction()
