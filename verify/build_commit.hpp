#pragma once
// The commit of the source tree this library was built from, short form ("unknown" when it was
// not a git checkout): what a report names, wherever the program runs. Defined in a file the
// build writes (cmake/write_build_commit.cmake).
namespace distdl::verify {

const char* build_commit();

}  // namespace distdl::verify
