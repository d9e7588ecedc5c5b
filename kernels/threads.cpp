#include "kernels/threads.hpp"

#include <cstdlib>
#include <mutex>
#include <string>

#include <omp.h>

extern "C" void openblas_set_num_threads(int num_threads);

namespace distdl::kernels {

int kernel_threads() {
    static const int threads = [] {
        const char* text = std::getenv("DISTDL_KERNEL_THREADS");
        if (!text) return 1;
        const int n = std::atoi(text);
        return n >= 1 ? n : 1;
    }();
    return threads;
}

void apply_thread_policy() {
    static std::once_flag blas_once;
    std::call_once(blas_once, [] { openblas_set_num_threads(kernel_threads()); });
    thread_local bool omp_done = false;
    if (!omp_done) {
        omp_set_num_threads(kernel_threads());
        omp_done = true;
    }
}

}  // namespace distdl::kernels
