#pragma once
// One worker = one core of work: the kernels run OpenBLAS and oneDNN single-threaded in the
// calling thread, so a process with many workers (MPI ranks or simulator threads) does not
// oversubscribe the machine.
//
// OpenBLAS (pthread build): openblas_set_num_threads(1), once per process. oneDNN (Debian's
// build uses the OpenMP runtime): omp_set_num_threads(1) in every thread that calls a kernel,
// because the OpenMP thread count is a per-thread setting. DISTDL_KERNEL_THREADS=n in the
// environment (read once) raises both to n for single-worker runs; see README "Kernels".
namespace distdl::kernels {

// Applies the thread policy to the calling thread (cheap after the first call per thread).
void apply_thread_policy();

// The thread count the policy uses (1 unless DISTDL_KERNEL_THREADS says otherwise).
int kernel_threads();

}  // namespace distdl::kernels
