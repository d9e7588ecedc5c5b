// A buffer of a type that cannot travel through a communicator (char here) is a compile error
// naming the types that can, not a link error; expect_compile_error.cmake compiles this with
// and without DISTDL_EXPECT_OK.
#include "core/communicator.hpp"

distdl::request receive(distdl::communicator& comm) {
#ifdef DISTDL_EXPECT_OK
    static unsigned char text[4];
#else
    static char text[4];
#endif
    return comm.irecv(text, 4, 0, 0);
}
