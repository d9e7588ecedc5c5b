// Options are named at the call site: a misspelled field is a compile error, never a silently
// different option (expect_compile_error.cmake compiles this with and without DISTDL_EXPECT_OK).
#include "core/broadcast.hpp"
#include "core/repartition.hpp"

#ifdef DISTDL_EXPECT_OK
constexpr distdl::broadcast_options broadcast_options{.transpose_src = true, .preserve_batch = false};
#else
constexpr distdl::broadcast_options broadcast_options{.transpose_src = true, .preserve_bach = false};
#endif
static_assert(broadcast_options.transpose_src && !broadcast_options.transpose_dest && !broadcast_options.preserve_batch);
constexpr distdl::repartition_options repartition_options{.preserve_batch = false};
static_assert(!repartition_options.preserve_batch);
