// distdl-verify: runs JSON cases (DESIGN §6) on the simulator or under MPI and checks each
// against the serial reference (sequential equivalence) and its own adjoint (dot-product test).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <unistd.h>

#include "core/checked_arithmetic.hpp"
#include "core/communicator.hpp"
#include "mpi_backend/environment.hpp"
#include "verify/case_file.hpp"
#include "verify/json_text.hpp"
#include "verify/random_cases.hpp"
#include "verify/registry.hpp"
#include "verify/report.hpp"
#include "verify/transports.hpp"

namespace {

using namespace distdl::verify;

const std::string synopsis =
    "usage: distdl-verify [--transport sim|mpi] [--filter TEXT] [--max-world N] [--report DIR]\n"
    "                     [--junit FILE] [--time-limit SECONDS] [--in-process]\n"
    "                     [--random N [--seed S] [--random-world W] [--random-out DIR]] [PATH...]\n";
const std::string usage_text = synopsis +
    "\n"
    "Runs the verification cases in PATH (case files, or folders searched recursively for *.json,\n"
    "the extension in any case, in sorted order; links to folders inside them are not followed).\n"
    "For each case: build the world on the chosen transport, the partitions and the layer; check\n"
    "(a) sequential equivalence with the serial reference (data movement bit-exact, arithmetic\n"
    "within 1e-12 double / 1e-5 float of the largest value of the whole reference tensor, or of\n"
    "its largest sum of |terms| when larger) and (b) the adjoint dot-product test (1e-13 double /\n"
    "1e-5 float); or, for cases that expect an error, that every rank refuses with the expected\n"
    "text.\n"
    "Prints one line per case and a summary per layer.\n"
    "\n"
    "  --transport sim   threads (default), in a worker process (a fork), so that a case past the\n"
    "                    time limit is killed and a crash fails only its case (a fresh worker\n"
    "                    runs the cases after it); hangs are reported as deadlocks\n"
    "  --transport mpi   Open MPI: run under `mpiexec -n N`; every case with world_size <= N runs\n"
    "                    on ranks 0..world_size-1 (the others idle); rank 0 prints, other ranks\n"
    "                    print only their failures, all ranks agree on the verdict; ranks that\n"
    "                    planned different cases (files, options) refuse together first (exit 2)\n"
    "  --filter TEXT     only cases whose name or file path contains TEXT (case files that cannot\n"
    "                    be used and that it leaves out are named on stderr)\n"
    "  --max-world N     skip (and report as skipped) cases of more than N workers; default 256,\n"
    "                    which leaves out the large cases of cases/scale (1,024 and 4,096 workers);\n"
    "                    0 means no limit\n"
    "  --report DIR      also write DIR/verify.md and DIR/verify.json\n"
    "  --junit FILE      also write JUnit XML for CI: one testcase per case (classname = the\n"
    "                    case's folder below the one all case files share, or its own name when\n"
    "                    they share it; name = case name; time), failures with their message,\n"
    "                    skipped cases with the reason\n"
    "  --time-limit S    per-case time limit in seconds (default 30); past it the case fails\n"
    "                    (simulator: its process is killed) or the job is aborted (MPI)\n"
    "  --in-process      (simulator) run each case in this process, to debug one: no time limit,\n"
    "                    and a crash ends the run\n"
    "  --random N        also run N random cases (after those of PATH, which may then be left\n"
    "                    out): Broadcast, SumReduce, AllSumReduce, Repartition, HaloExchange, Linear,\n"
    "                    Feature/Channel/General/ConvNd, Max/AvgPoolNd, Sequential chains of 2-4\n"
    "                    convolutions and poolings (ReLU after half the convolutions; a third of\n"
    "                    them then Flatten and 1-2 Linear layers, half with a ReLU between) or\n"
    "                    of 2-4 Linear layers, float32 and float64,\n"
    "                    random partitions on random worker lists, extents, kernel sizes,\n"
    "                    strides, paddings and dilations, input shapes given or learnt; about one\n"
    "                    in seven spoilt so that it must be refused (named ..._refused, with the\n"
    "                    text expected): one chain of convolutions and poolings in six at a\n"
    "                    stage, one classifier head in four of the others at its Flatten.\n"
    "                    Named random/<seed>/<index>_<layer>; the same N, seed and world give the\n"
    "                    same cases everywhere\n"
    "  --seed S          the random cases' seed (default 1)\n"
    "  --random-world W  their largest world size (default 8; under MPI at most the job's ranks\n"
    "                    for all of them to run)\n"
    "  --random-out DIR  also write them as case files DIR/random_<seed>_<index>.json (to keep\n"
    "                    or rerun one)\n"
    "  -h, --help        this text\n"
    "\n"
    "Exit status:\n"
    "  0  every case that ran passed (skipped cases are not failures; at least one case ran)\n"
    "  1  a case failed or its file could not be used, no case ran, or a report or --random-out file\n"
    "     could not be written\n"
    "  2  usage error (unknown option, bad value, missing path, an output folder that cannot be made\n"
    "     or written into, --junit naming a folder or one of --report's files): before any case runs\n"
    "  3  MPI only: a case exceeded the time limit and the job was aborted (the reports list it as\n"
    "     failed and the cases after it as skipped)\n"
    "\n"
    "Example: distdl-verify --report reports --junit reports/verify.junit.xml cases\n"
    "         distdl-verify --random 1000 --seed 7\n"
    "         mpiexec -n 4 distdl-verify --transport mpi cases/broadcast\n";

struct arguments {
    std::string transport = "sim";
    std::string filter;
    std::string report_dir;
    std::string junit_file;
    double time_limit = 30;
    bool time_limit_given = false;
    bool in_process = false;
    int max_world = 256;  // 0: no limit
    std::vector<std::string> paths;
    std::size_t random_cases = 0;
    std::uint64_t random_seed = 1;
    int random_world = 8;
    std::string random_out;
    bool random_detail_given = false;  // --seed, --random-world or --random-out
};

void print_usage_error(const std::string& message) {
    // The synopsis only: the whole help would bury the one line that says what was wrong.
    std::cerr << "distdl-verify: " << message << "\n"
              << synopsis << "(--help explains every option and the exit codes)\n";
}

[[noreturn]] void usage_error(const std::string& message) {
    print_usage_error(message);
    std::exit(2);
}

// A whole number in [lo, hi] for `option`, or a usage error.
unsigned long long whole_number(const std::string& option, const std::string& text, unsigned long long lo,
                                unsigned long long hi) {
    // Digits only: no sign, no spaces, nothing past 64 bits (strtoull would wrap or saturate).
    unsigned long long n = 0;
    const char* last = text.data() + text.size();
    const auto [end, problem] = std::from_chars(text.data(), last, n);
    if (text.empty() || problem != std::errc() || end != last || n < lo || n > hi)
        usage_error(option + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                    ", not " + text);
    return n;
}

// A positive decimal number of seconds up to a million (digits with at most one point: no sign,
// exponent, hex or inf, which strtod would take; beyond that, the watchdog's clock overflows),
// or a usage error.
double seconds(const std::string& option, const std::string& text) {
    const bool decimal = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos &&
                         std::count(text.begin(), text.end(), '.') <= 1 && text != ".";
    const double s = decimal ? std::strtod(text.c_str(), nullptr) : 0;
    if (!(s > 0) || !(s <= 1e6))
        usage_error(option + " needs a positive number of seconds up to 1000000 (such as 30 or 0.5), not " + text);
    return s;
}

// Makes `folder` for `option`'s output unless it exists; why it cannot be made or written into
// (empty: it can).
std::string output_folder_problem(const std::string& option, const std::string& folder) {
    std::error_code made, is;
    if (!std::filesystem::create_directories(folder, made) && !std::filesystem::is_directory(folder, is))
        return option + " " + folder + " is not a folder that can be made" +
               (made ? " (" + made.message() + ")" : std::string());
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
        const int why = errno;
        return option + ": the folder " + folder + " cannot be written into (" + std::strerror(why) + ")";
    }
    return {};
}

// Why the output paths cannot be used (empty: they can), found before the cases run, not
// after. Makes their folders. Under MPI rank 0 alone checks: only it writes the files.
std::string output_problem(const arguments& args) {
    namespace fs = std::filesystem;
    for (const auto& [option, folder] : {std::pair{"--random-out", args.random_out}, {"--report", args.report_dir}})
        if (!folder.empty())
            if (auto problem = output_folder_problem(option, folder); !problem.empty()) return problem;
    if (args.junit_file.empty()) return {};
    const fs::path junit(args.junit_file);
    std::error_code ec;  // (the throwing forms would end the program: parse runs outside main's try)
    if (fs::is_directory(junit, ec) || !junit.has_filename())
        return "--junit " + args.junit_file + " is a folder; give a file name";
    if (auto problem = output_folder_problem("--junit", junit.has_parent_path() ? junit.parent_path().string() : ".");
        !problem.empty())
        return problem;
    if (args.report_dir.empty()) return {};
    const fs::path junit_path = fs::weakly_canonical(junit, ec);
    for (const char* report : {"verify.md", "verify.json"})
        if (!ec && junit_path == fs::weakly_canonical(fs::path(args.report_dir) / report, ec) && !ec)
            return "--junit " + args.junit_file + " is the report " + report + " that --report " + args.report_dir +
                   " writes; give another file";
    return {};
}

arguments parse(int argc, char** argv) {
    arguments args;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* option) -> std::string {
            // Another option in its place means the value is missing (--report --filter x).
            if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
                usage_error(std::string(option) + " needs a value");
            return argv[++i];
        };
        // An output path given empty (an unset variable in a CI script) is refused, not ignored.
        auto path_value = [&](const char* option) -> std::string {
            std::string path = value(option);
            if (path.empty()) usage_error(std::string(option) + " needs a path, not an empty one");
            return path;
        };
        if (a == "--help" || a == "-h") {
            std::cout << usage_text;
            std::exit(0);
        } else if (a == "--transport") {
            args.transport = value("--transport");
            if (args.transport != "sim" && args.transport != "mpi")
                usage_error("--transport must be sim or mpi, not " + args.transport);
        } else if (a == "--filter") {
            args.filter = value("--filter");
        } else if (a == "--max-world") {  // 0: no limit
            args.max_world = int(whole_number(a, value("--max-world"), 0, 1000000));
        } else if (a == "--report") {
            args.report_dir = path_value("--report");
        } else if (a == "--junit") {
            args.junit_file = path_value("--junit");
        } else if (a == "--time-limit") {
            const std::string text = value("--time-limit");
            args.time_limit_given = true;
            args.time_limit = seconds(a, text);
        } else if (a == "--in-process") {
            args.in_process = true;
        } else if (a == "--random") {
            args.random_cases = whole_number(a, value("--random"), 1, 1000000);
        } else if (a == "--seed") {
            args.random_detail_given = true;
            args.random_seed = whole_number(a, value("--seed"), 0, ~0ull);
        } else if (a == "--random-world") {
            args.random_detail_given = true;
            args.random_world = int(whole_number(a, value("--random-world"), 1, 4096));
        } else if (a == "--random-out") {
            args.random_detail_given = true;
            args.random_out = path_value("--random-out");
        } else if (a.rfind("--", 0) == 0) {
            usage_error("unknown option " + a);
        } else {
            args.paths.push_back(a);
        }
    }
    if (args.paths.empty() && args.random_cases == 0) usage_error("no case files or folders given (nor --random)");
    // Started by mpiexec on several ranks, the simulator would run the whole suite once per rank,
    // every rank writing the same reports.
    for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const char* n = std::getenv(size); args.transport == "sim" && n && std::string(n) != "1")
            usage_error("started by mpiexec on " + std::string(n) + " ranks (" + size +
                        ") with --transport sim: every rank would run every case on its own simulator; give "
                        "--transport mpi");
    if (args.in_process && args.transport != "sim") usage_error("--in-process is for --transport sim");
    if (args.in_process && args.time_limit_given)
        usage_error("--in-process runs without a time limit: drop --time-limit");
    if (args.random_cases == 0 && args.random_detail_given)
        usage_error("--seed, --random-world and --random-out go with --random N");
    if (args.transport == "sim")
        if (const auto problem = output_problem(args); !problem.empty()) usage_error(problem);
    return args;
}

// The cases to run, in order: loaded specs, or outcomes of files that could not be used.
struct planned_case {
    std::optional<case_spec> spec;
    case_outcome invalid;
};

// `random_out_failed` tells whether a --random-out file could not be written.
std::vector<planned_case> plan(const arguments& args, const runner_registry& registry, int rank,
                               bool& random_out_failed) {
    std::vector<std::string> files;
    try {
        files = find_case_files(args.paths);
    } catch (const std::exception& e) {
        usage_error(e.what());
    }
    std::vector<planned_case> cases;
    std::map<std::string, std::string> seen;  // name -> file
    std::vector<std::string> unread;          // files that cannot be used, left out by the filter
    // The case of `file`, read by `read`, unless the filter matches neither its file nor its
    // name; a file that cannot be used or a name an earlier file has (filtered out or not) is an
    // invalid case.
    auto admit = [&](const std::string& file, const std::function<case_spec()>& read) {
        const bool file_matches = file.find(args.filter) != std::string::npos;
        planned_case c;
        try {
            c.spec = read();
        } catch (const std::exception& e) {
            if (file_matches) cases.push_back({std::nullopt, invalid_case(file, e.what())});
            else unread.push_back(file);
            return;
        }
        // Names are compared before the filter: a shard of a suite sees the duplicates the whole does.
        auto [it, fresh] = seen.emplace(c.spec->name, file);
        if (!file_matches && c.spec->name.find(args.filter) == std::string::npos) return;
        if (!fresh) {
            cases.push_back({std::nullopt, invalid_case(file, file + ": name: \"" + c.spec->name +
                                                                  "\" is also the name of " + it->second)});
            return;
        }
        cases.push_back(std::move(c));
    };
    for (const auto& file : files) admit(file, [&] { return load_case(file, registry); });
    // Their names are unknown, so the filter cannot tell whether they were meant: said, not run.
    if (!unread.empty() && rank == 0) {
        std::cerr << "distdl-verify: --filter left out " << unread.size() << " case file(s) that cannot be used:";
        for (const auto& file : unread) std::cerr << " " << file;
        std::cerr << "\n";
    }
    if (args.random_cases == 0) return cases;
    std::size_t index = 0;
    for (const auto& document : random_case_documents(args.random_cases, args.random_seed, args.random_world)) {
        const std::string file = "random_" + std::to_string(args.random_seed) + "_" + std::to_string(index++) + ".json";
        if (!args.random_out.empty() && rank == 0) {
            // A copy for the user: a failure is said and ends the run with 1, but the cases still
            // run (the other ranks run on regardless).
            std::ofstream out(std::filesystem::path(args.random_out) / file);
            out << document.dump(1) << "\n";
            out.close();
            if (!out) {
                std::cerr << "distdl-verify: cannot write " << args.random_out << "/" << file << "\n";
                random_out_failed = true;
            }
        }
        admit(file, [&] { return parse_case(document, file, registry); });  // a generator bug: like a broken file
    }
    return cases;
}

// After a failed random case: how to get it as a file, to rerun it alone.
void print_random_rerun_hint(const arguments& args, const run_record& record) {
    if (args.random_cases == 0 || !args.random_out.empty()) return;
    const auto failed_random = [](const case_outcome& o) {
        return o.result == verdict::failed && is_random_case_name(o.name);
    };
    if (std::none_of(record.outcomes.begin(), record.outcomes.end(), failed_random)) return;
    std::cout << "To rerun a failed random case alone: the same --random " << args.random_cases << " --seed "
              << args.random_seed << " --random-world " << args.random_world
              << " with --random-out DIR writes case i as DIR/random_" << args.random_seed
              << "_<i>.json; then distdl-verify DIR/random_" << args.random_seed << "_<i>.json\n";
}

// What every rank of an MPI job must plan alike: each case's name and document (or why its file
// was refused), and the options that decide how it runs.
std::string plan_text(const std::vector<planned_case>& cases, const arguments& args) {
    std::ostringstream text;
    text << args.time_limit << " " << args.max_world << "\n";
    for (const auto& c : cases)
        text << (c.spec ? c.spec->name + "\n" + json_text(c.spec->source) : "invalid\n" + c.invalid.message) << "\n";
    return text.str();
}

// Whether every rank of `world` planned the same cases (collective): two all-reduces, of the
// halves of a 64-bit FNV-1a hash of plan_text and then of each rank's verdict, so all agree.
bool same_plan_everywhere(distdl::communicator& world, const std::string& text) {
    std::uint64_t hash = 14695981039346656037ull;
    for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
    std::uint64_t halves[2] = {hash & 0xffffffffu, hash >> 32}, sums[2] = {};
    world.all_reduce_sum(halves, sums, 2, distdl::dtype::uint64);
    const auto n = static_cast<std::uint64_t>(world.size());
    const std::uint64_t differs =
        distdl::differs_from_sum(halves[0], n, sums[0]) || distdl::differs_from_sum(halves[1], n, sums[1]);
    return world.all_reduce_sum(differs) == 0;
}

// The reports and JUnit file of a run (rank 0 only); 1 when one could not be written.
// Each output apart: one that cannot be written must not keep the other from being (a stale
// JUnit file of an earlier run would pass for this one's).
int write_outputs(const arguments& args, const run_record& record) {
    int status = 0;
    const auto attempt = [&](const std::function<void()>& write) {
        try {
            write();
        } catch (const std::exception& e) {
            std::cerr << "distdl-verify: " << e.what() << "\n";
            status = 1;
        }
    };
    if (!args.report_dir.empty())
        attempt([&] {
            write_reports(args.report_dir, record);
            std::cout << "reports written to " << args.report_dir << "/verify.md and verify.json\n";
        });
    if (!args.junit_file.empty())
        attempt([&] {
            write_junit(args.junit_file, record);
            std::cout << "JUnit XML written to " << args.junit_file << "\n";
        });
    return status;
}

// What rank 0 has run so far and the case it is running, for the MPI watchdog: a job aborted at
// the time limit still leaves its reports and JUnit file, that case failed.
struct progress {
    std::mutex mutex;
    run_record record;
    std::vector<case_outcome> planned;  // every case of the run, in order: skipped, or an unusable file
    std::size_t running = 0;            // the index in `planned` of the case running
    bool writing = false;    // the run writes its own reports: every case is done
    bool cut_short = false;  // the watchdog writes them: the run must not
};

int run(const arguments& args, const std::function<job_case_result(const case_spec&, const layer_runner&)>& run_one,
        int rank, int job_ranks, distdl::communicator* job_world = nullptr, progress* shared = nullptr) {
    const auto& registry = builtin_registry();
    const auto start = std::chrono::steady_clock::now();
    bool random_out_failed = false;
    const auto cases = plan(args, registry, rank, random_out_failed);
    if (job_world && !same_plan_everywhere(*job_world, plan_text(cases, args))) {
        std::cout << "distdl-verify: rank " << rank << " planned " << cases.size()
                  << " case(s), but the ranks of the job planned different cases (their case files, --filter, "
                     "--max-world, --time-limit or --random options differ); nothing was run"
                  << std::endl;
        return 2;
    }
    run_record record;
    record.transport = args.transport;
    record.job_ranks = job_ranks;
    record.case_root = common_folder(args.paths);
    if (rank == 0)
        std::cout << "distdl-verify: " << cases.size() << " case(s) on the " << args.transport << " transport"
                  << (args.transport != "mpi"  ? std::string()
                      : job_ranks == 1         ? std::string(" with 1 rank")
                                               : " with " + std::to_string(job_ranks) + " ranks")
                  << "\n";
    if (shared) {
        const std::lock_guard<std::mutex> lock(shared->mutex);
        shared->record = record;
        for (const auto& c : cases) {
            shared->planned.push_back(c.spec ? outcome_for(*c.spec) : c.invalid);
            if (c.spec) shared->planned.back().result = verdict::skipped;
        }
    }
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const planned_case& c = cases[index];
        if (shared && c.spec) {
            const std::lock_guard<std::mutex> lock(shared->mutex);
            shared->running = index;
        }
        job_case_result result;
        if (!c.spec) {
            result.outcome = c.invalid;
        } else if (args.max_world > 0 && c.spec->world_size > args.max_world) {
            result.outcome = outcome_for(*c.spec);
            result.outcome.result = verdict::skipped;
            result.outcome.message = "world_size " + std::to_string(c.spec->world_size) + " is above --max-world " +
                                     std::to_string(args.max_world);
        } else {
            result = run_one(*c.spec, *registry.find(c.spec->layer));
        }
        if (rank == 0) {
            std::cout << case_line(result.outcome) << std::endl;
        } else if (!result.local_problem.empty() &&
                   result.outcome.message.find(result.local_problem) == std::string::npos) {
            // Only what rank 0's line does not already say (often every rank fails alike).
            std::cout << "[rank " << rank << "] FAIL " << result.outcome.name << ": " << result.local_problem << std::endl;
        }
        if (shared) {
            const std::lock_guard<std::mutex> lock(shared->mutex);
            shared->record.outcomes.push_back(result.outcome);
        }
        record.outcomes.push_back(std::move(result.outcome));
    }
    record.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto total = grand_total(record.outcomes);
    if (shared) {
        const std::lock_guard<std::mutex> lock(shared->mutex);
        if (shared->cut_short) return 3;  // the watchdog writes the reports and ends the job
        shared->writing = true;
    }
    if (rank == 0) {
        print_summary(std::cout, record);
        print_random_rerun_hint(args, record);
        if (write_outputs(args, record) != 0) return 1;
    }
    if (random_out_failed) return 1;
    if (total.passed + total.failed == 0) {
        if (rank == 0) std::cout << "no case ran\n";
        return 1;
    }
    return total.failed > 0 ? 1 : 0;
}

int run_on_simulator_transport(const arguments& args) {
    const int status = run(
        args,
        [&](const case_spec& spec, const layer_runner& runner) {
            return job_case_result{args.in_process ? run_in_this_process(spec, runner)
                                                   : run_on_simulator(spec, runner, args.time_limit),
                                   {}};
        },
        0, 1);
    if (const int ending = finish_simulator_cases(); ending != 0) {
        std::cout << "FAIL: the process that ran the cases " << describe_wait_status(ending)
                  << " after its last case (a sanitizer's report above?)\n";
        std::cout.flush();
        return 1;
    }
    std::cout.flush();
    return status;
}

int run_on_mpi_transport(int& argc, char**& argv, const arguments& args) {
    distdl::mpi::environment env(argc, argv);
    int status = 1;
    {
        auto world = distdl::mpi::world_communicator();
        const auto job = distdl::partition::world(world);
        const int rank = world->rank();
        // Rank 0's outputs, checked there (another node may not see its folders); every rank
        // then stops alike.
        const std::string problem = rank == 0 ? output_problem(args) : std::string();
        if (world->all_reduce_sum(std::uint64_t(problem.empty() ? 0 : 1)) != 0) {
            if (rank == 0) print_usage_error(problem);
            return 2;
        }
        progress done;
        watchdog dog([&env, &args, &done, rank](const std::string& what, double seconds) {
            std::fprintf(stderr, "[rank %d] case %s exceeded the time limit of %s s (hung?); aborting the job\n", rank,
                         what.c_str(), seconds_as_given(seconds).c_str());
            std::fflush(stderr);
            if (rank == 0) {
                run_record partial;
                std::vector<case_outcome> unreached;
                std::size_t late_index = 0;
                {
                    const std::lock_guard<std::mutex> lock(done.mutex);
                    done.cut_short = !done.writing;  // the run's own reports win a race at the last case
                    if (!done.cut_short) return;
                    partial = done.record;
                    // The late case may have ended (and cases after it) since its limit passed: the
                    // record is cut before it, and it and what follows are taken from the plan.
                    late_index = done.running;
                    partial.outcomes.resize(late_index);
                    partial.outcomes.push_back(done.planned[late_index]);
                    unreached.assign(done.planned.begin() + std::ptrdiff_t(late_index + 1), done.planned.end());
                }
                case_outcome& late = partial.outcomes[late_index];
                late.result = verdict::failed;
                late.seconds = seconds;
                for (const auto& o : partial.outcomes) partial.total_seconds += o.seconds;
                late.message = "exceeded the time limit of " + seconds_as_given(seconds) + " s; the job was aborted";
                // The cases after it are listed too (a file that cannot be used stays failed), so
                // that the reports account for the whole suite.
                const std::string late_name = late.name;
                for (auto& o : unreached) {
                    if (o.result == verdict::skipped)
                        o.message = "not run: the job was aborted when " + late_name + " exceeded the time limit";
                    partial.outcomes.push_back(std::move(o));
                }
                write_outputs(args, partial);
                std::cout.flush();
            } else {
                // Rank 0 writes the reports first (its own limit ends at about the same time).
                std::this_thread::sleep_for(std::chrono::seconds(5));
            }
            // MPI_Abort from this thread is outside MPI_THREAD_FUNNELED; if it cannot end the
            // job, leaving the process does (mpiexec then ends the other ranks).
            std::thread([] {
                std::this_thread::sleep_for(std::chrono::seconds(10));
                std::_Exit(3);
            }).detach();
            env.abort(3);
        });
        status = run(
            args,
            [&](const case_spec& spec, const layer_runner& runner) {
                return run_on_job(spec, runner, job, dog, args.time_limit);
            },
            rank, world->size(), world.get(), &done);
        world->barrier();
    }
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    const arguments args = parse(argc, argv);
    try {
        return args.transport == "mpi" ? run_on_mpi_transport(argc, argv, args) : run_on_simulator_transport(args);
    } catch (const std::exception& e) {
        std::cerr << "distdl-verify: " << e.what() << "\n";
        return 1;
    }
}
