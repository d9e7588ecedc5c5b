// A tensor of another element type passed to a module is a compile error, never a silent
// conversion. CALL picks the overload (forward_value, forward_into, adjoint_value,
// adjoint_into); expect_compile_error.cmake compiles this with and without DISTDL_EXPECT_OK.
#include "core/broadcast.hpp"

void call(distdl::broadcast<float>& layer) {
#ifdef DISTDL_EXPECT_OK
    const distdl::tensor<float> in;
#else
    const distdl::tensor<double> in;
#endif
    distdl::tensor<float> out;
#if CALL_forward_value
    out = layer.forward(in);
#elif CALL_forward_into
    layer.forward(in, out);
#elif CALL_adjoint_value
    out = layer.adjoint(in);
#elif CALL_adjoint_into
    layer.adjoint(in, out);
#else
#error "define CALL_<overload>=1"
#endif
}
