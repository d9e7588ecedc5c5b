#include "bench/report/markdown.hpp"

#include <cmath>
#include <set>

#include "bench/report/format.hpp"

namespace distdl::bench::report {

namespace {

std::string verdict(const std::optional<double>& ratio, const std::optional<double>& target) {
    if (!ratio || !target) return "-";
    // One decimal where it says all (1.1, 2.0), else two (1.05).
    const int digits = std::abs(*target * 10 - std::round(*target * 10)) < 1e-9 ? 1 : 2;
    return (*ratio <= *target ? "met (<= " : "MISSED (<= ") + format_fixed(*target, digits) + ")";
}

// Text as a table cell or heading: '<' would open an HTML tag (template arguments in benchmark
// names), '&' an entity, '|' would end the cell.
std::string cell(const std::string& text) {
    std::string out;
    for (const char c : text) out += c == '<' ? "&lt;" : c == '&' ? "&amp;" : c == '|' ? "\\|" : std::string(1, c);
    return out;
}

std::string faults(const workload_result& w, const std::string& role) {
    const auto it = w.roles.find(role);
    return it == w.roles.end() ? "-" : format_optional(it->second.faults_per_iteration, 1);
}

// "-" where no bytes were counted (the layer benchmarks).
std::string rate(const workload_result& w, const std::string& role) {
    const auto it = w.roles.find(role);
    return it == w.roles.end() || it->second.bytes_per_second <= 0 ? "-" : format_rate(it->second.bytes_per_second);
}

std::string time_of(const workload_result& w, const std::string& role) {
    const auto it = w.roles.find(role);
    return it == w.roles.end() ? "-" : format_time(it->second.seconds);
}

void write_group(std::ostream& out, const results& r, const std::string& group) {
    // Roles other than ours and baseline get a ratio column each.
    std::set<std::string> extra;
    for (const auto& [name, w] : r.workloads)
        if (segments(name).front() == group)
            for (const auto& [role, rr] : w.roles)
                if (role != "ours" && role != "baseline") extra.insert(role);
    out << "\n## " << cell(group) << "\n\n| workload | shapes | ours | baseline | ratio | target |";
    for (const auto& e : extra) out << " ours / " << cell(e) << " |";
    out << " GB/s ours | GB/s baseline | faults/iter ours | faults/iter baseline | msgs/iter ours |\n|---|---|--:|--:|--:|---|";
    for (std::size_t i = 0; i < extra.size(); ++i) out << "--:|";
    out << "--:|--:|--:|--:|--:|\n";
    for (const auto& [name, w] : r.workloads) {
        if (segments(name).front() != group) continue;
        const auto ours = w.roles.find("ours");
        out << "| " << cell(name.substr(group.size() + 1)) << " | " << cell(w.label) << " | " << time_of(w, "ours")
            << " | "
            << time_of(w, "baseline") << " | " << format_optional(w.ratio(), 2) << " | "
            << verdict(w.ratio(), target_of(name, w)) << " |";
        for (const auto& e : extra) out << " " << format_optional(w.ratio(e), 2) << " |";
        out << " " << rate(w, "ours") << " | " << rate(w, "baseline") << " | " << faults(w, "ours") << " | "
            << faults(w, "baseline") << " | "
            << (ours == w.roles.end() ? "-" : format_optional(ours->second.messages_per_iteration, 1)) << " |\n";
    }
}

// Ours on the simulator against ours on Open MPI, same workload (target at small sizes: the
// simulator is no slower).
void write_transports(std::ostream& out, const results& r) {
    std::ostringstream rows;
    for (const auto& [name, w] : r.workloads) {
        const auto s = segments(name);
        std::string mpi_name;
        for (std::size_t i = 0; i < s.size(); ++i) mpi_name += (i ? "/" : "") + (s[i] == "sim" ? std::string("mpi") : s[i]);
        if (mpi_name == name) continue;
        const auto other = r.workloads.find(mpi_name);
        if (other == r.workloads.end() || !w.roles.count("ours") || !other->second.roles.count("ours")) continue;
        const double sim_t = w.roles.at("ours").seconds, mpi_t = other->second.roles.at("ours").seconds;
        const bool small = s.back() != "large";
        const std::optional<double> ratio = mpi_t > 0 ? std::optional<double>(sim_t / mpi_t) : std::nullopt;
        rows << "| " << cell(name) << " | " << format_time(sim_t) << " | " << format_time(mpi_t) << " | "
             << format_optional(ratio, 2) << " | " << (small ? verdict(ratio, 1.0) : "-") << " |\n";
    }
    if (rows.str().empty()) return;
    out << "\n## simulator vs Open MPI (ours)\n\nThe same workload, ours on each transport; target: a "
           "small-tensor simulator iteration is no slower than Open MPI's.\n\n"
           "| workload | simulator | Open MPI | sim / mpi | target |\n|---|--:|--:|--:|---|\n"
        << rows.str();
}

}  // namespace

void write_markdown(std::ostream& out, const results& r, const std::string& svg_file) {
    out << "# distdl benchmarks\n\n";
    if (r.quick)
        out << "**Quick run** (`--quick`: a few iterations each): it shows the format; its numbers give "
               "direction only.\n\n";
    out << "- Machine: " << (r.cpu.empty() ? "unknown CPU" : r.cpu) << ", " << r.cores << " cores\n"
        << "- Commit: " << (r.commit.empty() ? "unknown" : r.commit) << "\n- Date: " << r.date << "\n\n"
        << "Each benchmark runs forward then adjoint of one primitive per iteration (f64; outputs reused, "
           "as in a steady-state training loop) on every worker; an iteration's time is the slowest "
           "worker's (Open MPI) or its span, first worker's start to last worker's end (simulator: "
           "threads sharing one clock and the cores), and a benchmark's time the mean iteration's, or at the large size (few iterations) "
           "the median iteration's, which one slow iteration of a busy machine does not move. "
           "**ratio** = ours / baseline time: on Open MPI (`mpi`) the baseline is raw MPI "
           "(`MPI_Bcast`/`MPI_Reduce`/`MPI_Allreduce`/`MPI_Alltoallv`, `MPI_Isend`/`MPI_Irecv` halo "
           "exchange) on the same ranks and data; on the simulator (`sim`) it is `memcpy` of the same "
           "bytes on every worker. `ours / memcpy` compares Open MPI runs with that physical limit. "
           "GB/s = 2 x bytes per worker / time. faults/iter = minor page faults per iteration of the "
           "worker that faulted most (under MPI its process, on the simulator its thread). msgs/iter = "
           "distdl's traffic counters summed over workers. Targets: Open MPI ratio <= 1.1 (large), "
           "<= 1.3 (small); simulator large ratio <= 2 (>= 0.5x memcpy bandwidth).\n\n"
           "The groups `<name>_layer` come from the layer benchmarks (`bench/layers/<name>_bench`, "
           "`--report-out`): ours is the layer's CPU time per step (forward + adjoint) summed over its "
           "simulated workers, the baseline the serial kernels' on the whole problem in one thread, "
           "`ours / kernels` the layer over its local kernels alone on the same workers (what the data "
           "movement adds), each the fastest of interleaved repetitions; their targets are the layers' "
           "goals.\n\n"
        << "![ours / baseline time, log scale](" << svg_file << ")\n";
    std::set<std::string> groups;
    for (const auto& [name, w] : r.workloads) groups.insert(segments(name).front());
    for (const auto& g : groups) write_group(out, r, g);
    write_transports(out, r);
}

}  // namespace distdl::bench::report
