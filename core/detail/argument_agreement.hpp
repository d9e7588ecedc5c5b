#pragma once
// Construction-time agreement of every worker on a module's arguments (DESIGN §4: construction
// is collective over the world). MPI compares neither shapes nor flags nor element types, so a
// worker built with other arguments would move wrong data, fail with a transport error or wait
// forever. A module lists its arguments as named fields and calls require(world) before any
// other communication; a disagreement is refused on every worker with one message naming the
// argument, the differing values and the world ranks that hold each. The module's name is the
// first field: workers that construct different modules are told so, and nothing else.
//
// Cost: one all-reduce of a fixed-size digest (128 bit counts) when the workers agree; only
// when they do not, the differing records travel (a few broadcasts, and reductions of one bit
// per rank), so even 4,096 simulated workers hold no per-rank table of records.
#include <cstdint>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/dtype.hpp"
#include "core/partition.hpp"

namespace distdl::detail {

class argument_agreement {
  public:
    explicit argument_agreement(std::string module_name);

    // Builders; `name` is how the argument is called in the message.
    argument_agreement& list(std::string name, const std::vector<std::size_t>& values);
    argument_agreement& number(std::string name, std::uint64_t value);
    argument_agreement& flag(std::string name, bool value);
    argument_agreement& element_type(dtype type);
    // "<name> shape" and "<name> workers": a partition's grid and its members' world ranks.
    argument_agreement& partition(const std::string& name, const cartesian_partition& p);

    // Collective over every rank of `world`: returns when all ranks gave the same fields,
    // otherwise throws distdl::invalid_argument (the same message) on every rank.
    void require(communicator& world) const;

    // The encoded record (what a digest is computed over) and its 128-bit digest.
    const std::vector<std::uint64_t>& record() const { return record_; }
    static std::vector<std::uint64_t> digest(const std::vector<std::uint64_t>& record);

  private:
    enum class kind : std::uint64_t { list = 1, number = 2, flag = 3, element_type = 4, ranks = 5, text = 6 };
    void add(std::string name, kind k, const std::vector<std::uint64_t>& values);

    std::string module_name_;
    std::vector<std::string> names_;
    // Per field: kind, count, values... (names are fixed by the code, so they do not travel).
    std::vector<std::uint64_t> record_;
    friend struct agreement_message;
};

// "[0-3,5,7-9]": world ranks in messages, compact at any world size.
std::string format_rank_set(const std::vector<int>& ranks);

}  // namespace distdl::detail
