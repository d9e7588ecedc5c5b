// distdl-bench: times every primitive (forward + adjoint) against raw-MPI and memcpy baselines
// on the same ranks and data, with Google Benchmark. See bench/README.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/measure.hpp"
#include "bench/median.hpp"
#include "bench/mpi_step.hpp"
#include "bench/step.hpp"
#include "bench/workload.hpp"
#include "mpi_backend/environment.hpp"
#include "simulator/run.hpp"

namespace {

using namespace distdl;
using namespace distdl::bench;

const std::string synopsis =
    "usage: distdl-bench [--transport sim|mpi] [--quick] [--workers 4,16] [--out FILE] [--check]\n"
    "                    [--small-iterations N] [--large-iterations N] [Google Benchmark flags]\n";
const std::string usage = synopsis +
    "\n"
    "Times forward + adjoint of Broadcast, SumReduce, AllSumReduce, Repartition and HaloExchange\n"
    "(f64, small ~1 KiB and large 8 MiB per worker), and HaloExchange with the geometries of the\n"
    "pooling and convolution layers' benchmarks (pool_halo, conv_halo: f32, 4 workers) against\n"
    "baselines on the same workers and data.\n"
    "Benchmark names are <role>/<primitive>/<transport>/w<workers>/<size>, role one of:\n"
    "  ours      distdl's primitive (forward(x, y) then adjoint(y, dx), outputs reused)\n"
    "  baseline  what the ratio is taken against: raw MPI (MPI_Bcast/Reduce/Allreduce/Alltoallv,\n"
    "            Isend/Irecv halo) on --transport mpi; memcpy of the same bytes on --transport sim\n"
    "  memcpy    (mpi only) memcpy of the same bytes on every rank: one machine's physical limit\n"
    "  allreduce (mpi only; broadcast, sum_reduce below large) MPI_Allreduce of the words distdl's\n"
    "            small path all-reduces (data and status words), forward and adjoint\n"
    "\n"
    "  --transport sim   (default) the threaded simulator; every workload of --workers\n"
    "  --transport mpi   Open MPI; run under mpiexec -n 4 or -n 16: the workloads of that many\n"
    "                    workers run, rank 0 prints, every rank runs the same benchmarks\n"
    "  --quick           few iterations (development, smoke tests)\n"
    "  --workers LIST    simulator worker counts, of 4 and 16 (default 4,16)\n"
    "  --out FILE        also write Google Benchmark JSON to FILE (rank 0)\n"
    "  --check           (mpi only) instead of timing, run distdl and the raw-MPI baseline once\n"
    "                    on the same inputs and require bit-identical outputs on every rank\n"
    "                    (proves the baselines do the same work); exit status 1 on a mismatch\n"
    "  --small-iterations N, --large-iterations N   timed iterations per benchmark\n"
    "                    (default 1000 and 10; --quick: 20 and 2)\n"
    "  -h, --help        this text\n"
    "Time per iteration (manual time) is the slowest worker's (mpi), or the span from the first\n"
    "worker's start to the last worker's end (sim: threads sharing one clock and the cores);\n"
    "counters: bytes_per_second (2 x bytes per worker / time), msgs_per_iter and\n"
    "bytes_sent_per_iter (distdl's traffic counters summed over workers; 0 for baselines),\n"
    "faults_per_iter (minor page faults of the worker that faulted most: its process under MPI,\n"
    "its thread on the simulator); on Open MPI at the large size median_seconds (the median\n"
    "iteration's time, which the report uses instead of the mean).\n"
    "Exit status 2 on a usage error, also when --benchmark_filter matches no benchmark (nothing\n"
    "is run, no --out file is left).\n";

struct options {
    std::string transport = "sim";
    bool quick = false;
    bool check = false;
    std::set<int> workers{4, 16};
    std::string out;
    std::optional<int> small_iterations, large_iterations;
};

[[noreturn]] void fail(const std::string& message) {
    // The synopsis only: the whole help would bury the one line that says what was wrong.
    std::cerr << "distdl-bench: " << message << "\n" << synopsis << "(--help for more)\n";
    std::exit(2);
}

int positive(const std::string& text, const char* what) {
    try {
        std::size_t used = 0;
        const int v = std::stoi(text, &used);
        if (used == text.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    fail(std::string(what) + " must be a positive integer, got '" + text + "'");
}

bool has_workloads(int workers) {
    for (const workload& w : all_workloads())
        if (w.workers == workers) return true;
    return false;
}

// Takes our flags out of argv; leaves the program name and Google Benchmark's flags.
options parse(int& argc, char** argv) {
    options o;
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* flag) -> std::string {
            // Another option in its place means the value is missing (--out --quick).
            if (i + 1 >= argc || std::strncmp(argv[i + 1], "--", 2) == 0) fail(std::string(flag) + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::cout << usage;
            std::exit(0);
        } else if (a == "--transport") {
            o.transport = value("--transport");
            if (o.transport != "sim" && o.transport != "mpi") fail("--transport must be sim or mpi, got '" + o.transport + "'");
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--check") {
            o.check = true;
        } else if (a == "--workers") {
            o.workers.clear();
            std::stringstream list(value("--workers"));
            for (std::string item; std::getline(list, item, ',');) {
                const int n = positive(item, "--workers");
                if (!has_workloads(n)) fail("--workers: no workloads of " + item + " workers (there are of 4 and 16)");
                o.workers.insert(n);
            }
            if (o.workers.empty()) fail("--workers needs at least one of 4 and 16, got ''");
        } else if (a == "--out") {
            o.out = value("--out");
        } else if (a == "--small-iterations") {
            o.small_iterations = positive(value("--small-iterations"), "--small-iterations");
        } else if (a == "--large-iterations") {
            o.large_iterations = positive(value("--large-iterations"), "--large-iterations");
        } else if (a.rfind("--benchmark_", 0) == 0) {
            argv[kept++] = argv[i];
        } else {
            fail("unknown argument '" + a + "'");
        }
    }
    argc = kept;
    if (o.check && o.transport != "mpi") fail("--check compares with the raw-MPI baselines: it needs --transport mpi");
    return o;
}

// Ranks other than 0 under MPI run every benchmark but report nothing.
class silent_reporter final : public benchmark::BenchmarkReporter {
  public:
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
};

struct role_kind {
    std::string name;
    std::function<std::unique_ptr<step>(const workload&, const std::shared_ptr<communicator>&)> make;
};

class suite {
  public:
    suite(options o, std::shared_ptr<communicator> mpi_world) : o_(std::move(o)), mpi_world_(std::move(mpi_world)) {}

    void register_all() {
        const bool mpi = o_.transport == "mpi";
        std::vector<role_kind> roles{{"ours", make_distdl_step}};
        auto memcpy_role = [](const workload& w, const std::shared_ptr<communicator>&) { return make_memcpy_step(w); };
        if (mpi) {
            roles.push_back({"baseline", make_mpi_step});
            roles.push_back({"memcpy", memcpy_role});
        } else {
            roles.push_back({"baseline", memcpy_role});
        }
        for (const workload& w : all_workloads()) {
            if (mpi ? w.workers != mpi_world_->size() : !o_.workers.count(w.workers)) continue;
            const bool large = w.size == "large";
            const int iterations = large ? o_.large_iterations.value_or(o_.quick ? 2 : 10)
                                         : o_.small_iterations.value_or(o_.quick ? 20 : 1000);
            const int warmup = large ? (o_.quick ? 1 : 2) : (o_.quick ? 3 : 20);
            std::vector<role_kind> these = roles;
            // Broadcast and SumReduce move a small tensor in one all-reduce of the data and
            // status words (issue 11): the same raw MPI_Allreduce is their floor.
            if (mpi && !large && (w.kind == primitive_kind::broadcast || w.kind == primitive_kind::sum_reduce))
                these.push_back({"allreduce", make_mpi_allreduce_step});
            for (const role_kind& role : these) {
                const std::string name = role.name + "/" + w.name(o_.transport);
                benchmark::RegisterBenchmark(name.c_str(),
                                             [this, w, role, warmup](benchmark::State& state) {
                                                 run(state, w, role, warmup);
                                             })
                    ->Iterations(iterations)
                    ->UseManualTime()
                    ->Unit(large ? benchmark::kMillisecond : benchmark::kMicrosecond);
            }
        }
    }

  private:
    void run(benchmark::State& state, const workload& w, const role_kind& role, int warmup) const {
        const int iterations = static_cast<int>(state.max_iterations);
        measurement m;
        if (mpi_world_) {
            auto s = role.make(w, mpi_world_);
            m = measure(*mpi_world_, *s, warmup, iterations, worker_kind::process);
        } else {
            sim::run(w.workers, [&](const std::shared_ptr<communicator>& world) {
                auto s = role.make(w, world);
                measurement mine = measure(*world, *s, warmup, iterations, worker_kind::thread);
                if (world->rank() == 0) m = std::move(mine);
            });
        }
        std::size_t i = 0;
        for (auto _ : state) state.SetIterationTime(m.seconds[i++]);
        state.SetBytesProcessed(static_cast<std::int64_t>(2 * w.bytes_per_worker()) * state.iterations());
        state.counters["msgs_per_iter"] = m.messages_per_iteration;
        state.counters["bytes_sent_per_iter"] = m.bytes_sent_per_iteration;
        state.counters["faults_per_iter"] = m.faults_per_iteration;
        // Few iterations (large) on Open MPI: the report takes the median iteration, which one
        // slow iteration of a shared machine does not move, instead of Google Benchmark's mean.
        // Not on the simulator: there, on a 2-core machine, ratios of medians spread more over
        // runs than ratios of means.
        if (mpi_world_ && w.size == "large") state.counters["median_seconds"] = median(m.seconds);
        state.counters["workers"] = w.workers;
        state.SetLabel(w.describe());
    }

    options o_;
    std::shared_ptr<communicator> mpi_world_;
};

int run_benchmarks(int argc, char** argv, const options& o, bool print) {
    std::vector<std::string> args(argv, argv + argc);
    if (!print) {
        // Only rank 0 writes the output file.
        std::erase_if(args, [](const std::string& a) { return a.rfind("--benchmark_out", 0) == 0; });
    } else if (!o.out.empty()) {
        args.push_back("--benchmark_out=" + o.out);
        args.push_back("--benchmark_out_format=json");
    }
    std::vector<char*> pointers;
    for (auto& a : args) pointers.push_back(a.data());
    int count = static_cast<int>(pointers.size());
    benchmark::Initialize(&count, pointers.data());
    if (benchmark::ReportUnrecognizedArguments(count, pointers.data())) return 2;
    benchmark::AddCustomContext("transport", o.transport);
    benchmark::AddCustomContext("quick", o.quick ? "true" : "false");
    std::size_t ran = 0;
    if (print) {
        ran = benchmark::RunSpecifiedBenchmarks();
    } else {
        silent_reporter silent;
        ran = benchmark::RunSpecifiedBenchmarks(&silent);
    }
    benchmark::Shutdown();
    // Every rank registered and filtered alike, so every rank leaves alike. An empty --out file
    // would read as a broken one, not as a run of nothing.
    if (ran == 0) {
        if (print) {
            std::cerr << "distdl-bench: no benchmark matches the filter given: nothing was run\n";
            if (!o.out.empty()) std::remove(o.out.c_str());
        }
        return 2;
    }
    return 0;
}

// distdl against the raw-MPI baseline on every workload of this world size: same inputs, one
// forward + adjoint each, outputs bit-identical on every rank. Returns the exit status.
int check_baselines(const std::shared_ptr<communicator>& world) {
    int failures = 0;
    for (const workload& w : all_workloads()) {
        if (w.workers != world->size()) continue;
        auto ours = make_distdl_step(w, world);
        auto baseline = make_mpi_step(w, world);
        ours->run();
        baseline->run();
        const auto a = ours->outputs(), b = baseline->outputs();
        const bool same = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
        const auto differing = world->all_reduce_sum<std::int64_t>(same ? 0 : 1);
        if (!same) {
            std::ostringstream line;  // one write per rank, so lines of different ranks do not interleave
            line << "check " << w.name("mpi") << ": rank " << world->rank() << " has " << a.size()
                 << " output values from distdl and " << b.size() << " from the baseline"
                 << (a.size() == b.size() ? ", with different values" : "") << "\n";
            std::cerr << line.str() << std::flush;
        }
        if (world->rank() == 0)
            std::cout << "check " << w.name("mpi") << " (" << w.describe() << "): "
                      << (differing == 0 ? "same outputs" : "MISMATCH on " + std::to_string(differing) + " ranks")
                      << std::endl;
        if (differing != 0) ++failures;
    }
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    if (o.transport == "sim") {
        try {
            suite s(o, nullptr);
            s.register_all();
            return run_benchmarks(argc, argv, o, true);
        } catch (const std::exception& e) {
            std::cerr << "distdl-bench: " << e.what() << "\n";
            return 1;
        }
    }
    mpi::environment env(argc, argv);
    int status = 0;
    try {
        auto world = mpi::world_communicator();
        if (!has_workloads(world->size())) {
            // Every rank knows the size: all leave alike, rank 0 says why.
            if (world->rank() == 0)
                std::cerr << "distdl-bench: no workloads of " << world->size()
                          << " workers: run under mpiexec -n 4 or -n 16\n";
            return 2;
        }
        if (o.check) {
            status = check_baselines(world);
        } else {
            suite s(o, world);
            s.register_all();
            status = run_benchmarks(argc, argv, o, world->rank() == 0);
        }
    } catch (const std::exception& e) {
        std::cerr << "distdl-bench: " << e.what() << "\n";
        env.abort(1);  // the other ranks may be waiting in a collective
    }
    return status;
}
