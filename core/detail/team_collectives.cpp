#include "core/detail/team_collectives.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checked_arithmetic.hpp"
#include "core/detail/call_status.hpp"
#include "core/detail/dtype_code.hpp"
#include "core/detail/output.hpp"
#include "core/error.hpp"

namespace distdl::detail {

bool sums_in_place(const partition& provide, const partition& obtain) {
    return provide.active() && obtain.active() && provide == obtain;
}

namespace {

// Header words: [dtype, contributes, rank, extent 0, ..., extent max_header_rank-1].
constexpr std::size_t header_words = 3 + max_header_rank;

// Status travelling with the data: the sum over the members (0: all as cached).
constexpr std::uint64_t status_same = 0;
constexpr std::uint64_t status_changed = 1;

template <class T>
void encode_header(std::vector<std::uint64_t>& words, const tensor<T>* x) {
    words.assign(header_words, 0);
    words[0] = static_cast<std::uint64_t>(dtype_of<T>());
    if (x == nullptr) return;
    words[1] = 1;
    words[2] = x->dimension();
    // A rank too large still travels (without extents) so that every member rejects it.
    if (x->dimension() <= max_header_rank) std::copy(x->shape().begin(), x->shape().end(), words.begin() + 3);
}

// The shape a header describes; throws when it cannot be this worker's element type or rank.
template <class T>
shape_t decode_header(const std::uint64_t* words, int world_rank, const char* layer) {
    DISTDL_REQUIRE(words[0] == static_cast<std::uint64_t>(dtype_of<T>()),
                   layer << ": world rank " << world_rank << " sends " << dtype_name(words[0])
                         << " data to a worker that expects " << to_string(dtype_of<T>()));
    DISTDL_REQUIRE(words[2] <= max_header_rank, layer << ": world rank " << world_rank << " holds a tensor of rank "
                                                      << words[2] << "; at most " << max_header_rank
                                                      << " dimensions are supported");
    return shape_t(words + 3, words + 3 + words[2]);
}

// Output of a worker that does not receive.
template <class T>
void idle_output(const tensor<T>& x, tensor<T>& y, bool provided, bool preserve_batch) {
    if (provided) {
        const std::size_t batch = x.dimension() == 0 ? 0 : x.shape()[0];
        prepare_output(y, preserve_batch ? shape_t{batch, 0} : shape_t{0});
    } else {
        copy_into(x, y);  // active in neither team: a copy of the (zero-volume) input
    }
}

// A worker that provides nothing must pass a zero-volume tensor.
template <class T>
void require_zero_volume(const tensor<T>& x, const partition& team, const char* layer) {
    DISTDL_REQUIRE(x.size() == 0, layer << ": world rank " << team.world_comm()->rank()
                                        << " provides no data here and must pass a zero-volume tensor, got shape "
                                        << format_piece_shape(shape_of(x)));
}

// The same check as a problem text (empty: none), for a worker that receives but does not
// provide: its verdict is agreed with its team.
template <class T>
std::string zero_volume_problem(const tensor<T>& x, const partition& team, const char* layer) {
    if (x.size() == 0) return {};
    return std::string(layer) + ": world rank " + std::to_string(team.world_comm()->rank()) +
           " provides no data here and must pass a zero-volume tensor, got shape " + format_piece_shape(shape_of(x));
}

// Metadata traffic is labelled apart from the data ("<label>.shapes").
class shapes_scope {
  public:
    explicit shapes_scope(const partition& team)
        : scope_(team.world_comm()->traffic(), team.world_comm()->traffic().label() + ".shapes") {}

  private:
    traffic_scope scope_;
};

template <class T>
bool is_small(std::size_t count) {
    return count * sizeof(T) <= fused_status_limit;
}

// Words of the status a copy's members all-reduce: the root adds status_changed when its
// shape left the cache, every receiver status_problem when its own argument is wrong.
constexpr std::uint64_t status_problem = 2;

// Data words of a copy's fused all-reduce: the root's elements as raw bits (the others add
// zero words, so the sum is those bits exactly, whatever the values).
template <class T>
std::size_t words_of(std::size_t count) {
    return (count * sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);
}

// Every broadcast of a copy's data: nonblocking on every member (MPI matches a nonblocking
// collective only with nonblocking ones), so that a root that is also a receiver (`own`) copies
// x into *own while the broadcast is in flight. A separate copy ahead of it cost Broadcast and
// SumReduce on Open MPI (4 ranks, 8 MiB) ~1.15x raw MPI, which does no such copy.
template <class T>
void broadcast_data(communicator& comm, T* data, std::size_t count, const tensor<T>* x, tensor<T>* own,
                    team_scratch<T>& scratch) {
    const bool copies = own != nullptr && own != x;
    if (copies) prepare_output(*own, shape_of(*x));  // before the broadcast starts: nothing below throws
    scratch.requests.clear();
    scratch.requests.push_back(comm.ibroadcast(data, count, 0));
    if (copies) std::copy(x->data(), x->data() + x->size(), own->data());
    comm.wait_all(scratch.requests);
}

// One step of a copy over `team` while its shape is known (collective over the team): the
// root's x (root only; its shape tells `changed`) goes to every member, and every member's
// problem (receivers only) to every member. Returns the status sum (status_same: the data are
// in y, and in *own when given; status_changed set: fall back to the header path);
// throws the agreed error when a member has a problem.
template <class T>
std::uint64_t copy_known(const partition& team, const tensor<T>* x, tensor<T>* y, const std::string& problem,
                         team_cache& cache, team_scratch<T>& scratch, tensor<T>* own = nullptr) {
    communicator& comm = *team.comm();
    const std::size_t count = volume(cache.shape);
    const bool same = x == nullptr || has_shape(*x, cache.shape);
    const std::uint64_t mine = (same ? status_same : status_changed) + (problem.empty() ? 0 : status_problem);
    std::uint64_t total = 0;
    if (is_small<T>(count)) {
        // [data bits | status] in one all-reduce.
        const std::size_t words = words_of<T>(count);
        scratch.bits_in.assign(words + 1, 0);
        scratch.bits_out.resize(words + 1);
        if (x != nullptr && same && count > 0) std::memcpy(scratch.bits_in.data(), x->data(), count * sizeof(T));
        scratch.bits_in[words] = mine;
        comm.all_reduce_sum(scratch.bits_in.data(), scratch.bits_out.data(), words + 1, dtype::uint64);
        total = scratch.bits_out[words];
        if (total == status_same && y != nullptr) {
            prepare_output(*y, cache.shape);
            if (count > 0) std::memcpy(y->data(), scratch.bits_out.data(), count * sizeof(T));
        }
        if (total == status_same && own != nullptr) copy_into(*x, *own);
    } else {
        // The status ahead of the bulk, which then goes straight from x into y.
        comm.all_reduce_sum(&mine, &total, 1, dtype::uint64);
        if (total == status_same) {
            if (x != nullptr) {
                broadcast_data(comm, const_cast<T*>(x->data()), count, x, own, scratch);  // the root only reads it
            } else {
                prepare_output(*y, cache.shape);
                broadcast_data<T>(comm, y->data(), count, nullptr, nullptr, scratch);
            }
        }
    }
    if (total >= status_problem) agree_on_call(comm, problem, false);  // throws on every member
    return total;
}

// The header step of a copy (first call, or after a change): the root's shape header and every
// receiver's problem flag, all-reduced; throws the agreed error when a member has a problem.
template <class T>
void copy_header(const partition& team, const tensor<T>* x, const std::string& problem, team_scratch<T>& scratch) {
    shapes_scope scope(team);
    encode_header(scratch.header, x);
    if (x == nullptr) std::fill(scratch.header.begin(), scratch.header.end(), 0);
    scratch.header.push_back(problem.empty() ? 0 : 1);
    scratch.gathered.assign(scratch.header.size(), 0);
    team.comm()->all_reduce_sum(scratch.header.data(), scratch.gathered.data(), scratch.header.size(), dtype::uint64);
    if (scratch.gathered.back() != 0) agree_on_call(*team.comm(), problem, false);
}

// Root of `team`: sends x to every member; with `own`, it is also a receiver and *own becomes
// a copy of x (written only when the copy succeeds). Fast path while the team's shape is known.
template <class T>
void send_copy(const partition& team, const tensor<T>& x, const char* layer, team_cache& cache,
               team_scratch<T>& scratch, tensor<T>* own = nullptr) {
    DISTDL_REQUIRE(team.rank() == 0, layer << ": internal error: the source is rank " << team.rank()
                                           << " of its team, not rank 0");
    if (cache.known) {
        if (copy_known<T>(team, &x, nullptr, {}, cache, scratch, own) == status_same) return;
        cache.known = false;
    }
    copy_header(team, &x, {}, scratch);
    DISTDL_REQUIRE(x.dimension() <= max_header_rank, layer << ": tensor of rank " << x.dimension() << "; at most "
                                                           << max_header_rank << " dimensions are supported");
    broadcast_data(*team.comm(), const_cast<T*>(x.data()), x.size(), &x, own, scratch);  // the root only reads it
    cache.shape = shape_of(x);
    cache.known = true;
}

// Member of `team` other than its root: receives into y. `problem`: this worker's own
// argument error (agreed with the team).
template <class T>
void receive_copy(const partition& team, tensor<T>& y, const std::string& problem, const char* layer,
                  team_cache& cache, team_scratch<T>& scratch) {
    if (cache.known) {
        if (copy_known<T>(team, nullptr, &y, problem, cache, scratch) == status_same) return;
        cache.known = false;
    }
    copy_header<T>(team, nullptr, problem, scratch);
    const shape_t shape = decode_header<T>(scratch.gathered.data(), team.members().front(), layer);
    prepare_output(y, shape);
    broadcast_data<T>(*team.comm(), y.data(), y.size(), nullptr, nullptr, scratch);
    cache.shape = shape;
    cache.known = true;
}

// "world rank 3 holds [4,2]" for the header of the member at `team_rank`.
std::string holding(const partition& team, int team_rank, const std::uint64_t* words) {
    const std::string who = "world rank " + std::to_string(team.members()[static_cast<std::size_t>(team_rank)]);
    if (words[2] > max_header_rank)
        return who + " holds a tensor of rank " + std::to_string(words[2]) + " (at most " +
               std::to_string(max_header_rank) + " dimensions are supported)";
    return who + " holds " + format_list(shape_t(words + 3, words + 3 + words[2]));
}

// Error path of agree_on_shape, on every member together: the contributors' shapes differ. The
// lowest-ranked contributor's header goes to every member (found by a bit mask, one bit per
// member), and the contributors holding another shape are named against it.
[[noreturn]] void refuse_differing_shapes(const partition& team, bool contributes,
                                          const std::vector<std::uint64_t>& header, const char* layer) {
    communicator& comm = *team.comm();
    const int me = comm.rank();
    std::vector<std::uint64_t> mark((static_cast<std::size_t>(comm.size()) + 63) / 64, 0), marked(mark.size(), 0);
    if (contributes) mark[static_cast<std::size_t>(me) / 64] = std::uint64_t{1} << (me % 64);
    comm.all_reduce_sum(mark.data(), marked.data(), mark.size(), dtype::uint64);
    int first = 0;
    while (!((marked[static_cast<std::size_t>(first) / 64] >> (first % 64)) & 1u)) ++first;
    std::vector<std::uint64_t> reference = me == first ? header : std::vector<std::uint64_t>(header_words, 0);
    comm.broadcast(reference.data(), header_words, first);
    const bool same = std::equal(reference.begin() + 2, reference.begin() + header_words, header.begin() + 2);
    const std::string problem = contributes && !same ? holding(team, me, header.data()) : std::string();
    agree_on_call(comm, problem, false, [&](const std::string& other, const std::string&, std::uint64_t count) {
        return std::string(layer) + ": tensors summed together must have one shape, but " +
               holding(team, first, reference.data()) + " and " + other +
               (count > 1 ? " (" + std::to_string(count) + " workers hold another shape than it)" : std::string());
    });
    throw std::logic_error("refuse_differing_shapes: the shapes differ, but no worker holds another shape");
}

// Every member of `team` learns the shape the contributors (mine non-null) hold and checks
// that they agree, so all members throw together or none does. Memory and messages do not
// grow with the team: the header words are summed over the team and each contributor checks
// its own against the sums (differs_from_sum). Only when some contributor differs is its shape
// named (refuse_differing_shapes).
template <class T>
shape_t agree_on_shape(const partition& team, const tensor<T>* mine, const std::string& own_problem, const char* layer,
                       team_scratch<T>& scratch) {
    shapes_scope scope(team);
    encode_header(scratch.header, mine);
    scratch.header.push_back(own_problem.empty() ? 0 : 1);  // a non-contributor's own argument error
    communicator& comm = *team.comm();
    scratch.gathered.assign(header_words + 1, 0);
    comm.all_reduce_sum(scratch.header.data(), scratch.gathered.data(), header_words + 1, dtype::uint64);
    if (scratch.gathered[header_words] != 0) agree_on_call(comm, own_problem, false);  // throws on every member
    const std::uint64_t contributors = scratch.gathered[1];
    DISTDL_REQUIRE(contributors > 0, layer << ": internal error: a team with no contributing worker");
    bool differs = false;
    for (std::size_t k = 2; mine != nullptr && k < header_words; ++k)
        differs = differs || differs_from_sum(scratch.header[k], contributors, scratch.gathered[k]);
    if (agree_on_call(comm, {}, differs)) refuse_differing_shapes(team, mine != nullptr, scratch.header, layer);
    const std::uint64_t rank = scratch.gathered[2] / contributors;
    DISTDL_REQUIRE(rank <= max_header_rank, layer << ": tensors of rank " << rank << "; at most " << max_header_rank
                                                  << " dimensions are supported");
    shape_t agreed(rank);
    for (std::size_t d = 0; d < agreed.size(); ++d) agreed[d] = scratch.gathered[3 + d] / contributors;
    return agreed;
}

// Sum over `team` of the contributors' tensors (mine null: this worker contributes −0, the
// additive identity; +0 would turn a sum of −0 terms into +0).
// With `to_all` every member receives the sum, otherwise only rank 0; `out` is written on the
// receivers. Fast path while the team's shape is known: the status is all-reduced with the
// data (small) or ahead of it (large), so every contributor learns a change. `problem`: the
// argument error of a member that does not contribute (agreed with the team, also free of an
// extra round).
template <class T>
void team_sum(const partition& team, const tensor<T>* mine, tensor<T>* out, bool to_all, const std::string& problem,
              const char* layer, team_cache& cache, team_scratch<T>& scratch) {
    communicator& comm = *team.comm();
    const bool receives = to_all || team.rank() == 0;
    bool just_agreed = false;
    for (;;) {
        if (!cache.known) {
            cache.shape = agree_on_shape(team, mine, problem, layer, scratch);
            cache.known = true;
            just_agreed = true;
        }
        const std::size_t count = volume(cache.shape);
        const bool same = mine == nullptr || has_shape(*mine, cache.shape);
        // Status elements: [changed, problem], each summed over the members (exact small integers).
        const T changed = static_cast<T>(same ? status_same : status_changed);
        const T problems = static_cast<T>(problem.empty() ? 0 : 1);
        if (is_small<T>(count)) {
            // Right after an agreement too: the first call's sum then adds in the order of every
            // later one (Open MPI's all-reduce and reduce fold the terms in different orders).
            scratch.fused_in.resize(count + 2);
            scratch.fused_out.resize(count + 2);
            if (same && mine != nullptr) std::copy(mine->data(), mine->data() + count, scratch.fused_in.data());
            else std::fill_n(scratch.fused_in.begin(), count, -T(0));
            scratch.fused_in[count] = changed;
            scratch.fused_in[count + 1] = problems;
            comm.all_reduce_sum(scratch.fused_in.data(), scratch.fused_out.data(), count + 2, dtype_of<T>());
            if (scratch.fused_out[count + 1] != T(0)) agree_on_call(comm, problem, false);  // throws everywhere
            if (scratch.fused_out[count] == static_cast<T>(status_same)) {
                if (receives) {
                    prepare_output(*out, cache.shape);
                    std::copy(scratch.fused_out.data(), scratch.fused_out.data() + count, out->data());
                }
                return;
            }
        } else {
            bool agreed = just_agreed;  // else the status goes ahead of the data
            if (!agreed) {
                const T words[2] = {changed, problems};
                T total[2] = {};
                comm.all_reduce_sum(words, total, 2, dtype_of<T>());
                if (total[1] != T(0)) agree_on_call(comm, problem, false);  // throws everywhere
                agreed = total[0] == static_cast<T>(status_same);
            }
            if (agreed) {
                if (receives) prepare_output(*out, cache.shape);
                if (mine == nullptr) std::fill_n(out->data(), count, -T(0));  // a destination: in place
                const T* send = mine != nullptr ? mine->data() : out->data();
                if (to_all) comm.all_reduce_sum(send, out->data(), count, dtype_of<T>());
                else comm.reduce_sum(send, receives ? out->data() : nullptr, count, dtype_of<T>(), 0);
                return;
            }
        }
        cache.known = false;
    }
}

// Runs steps one after the other even when one throws, and rethrows the first error after
// the last step: a worker in two teams still takes part in the second one.
class first_error_keeper {
  public:
    template <class F>
    void operator()(F&& step) {
        try {
            step();
        } catch (...) {
            if (!first_) first_ = std::current_exception();
        }
    }
    void rethrow() {
        if (first_) std::rethrow_exception(first_);
    }

  private:
    std::exception_ptr first_;
};

}  // namespace

template <class T>
bool copy_out(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x, tensor<T>& y,
              bool preserve_batch, const char* layer, team_scratch<T>& scratch, bool source_copies) {
    const bool gives = provide.active();
    const bool gets = obtain.active();
    if (gives && gets && provide == obtain) {
        // Source of its own copy: the output is a copy of x (or x itself), and x goes to the
        // others; the copy is made while the broadcast is in flight.
        if (provide.size() > 1) send_copy(provide, x, layer, scratch.provide_cache, scratch, source_copies ? &y : nullptr);
        else if (source_copies) copy_into(x, y);
        return source_copies;
    }
    if (!gets) {
        if (!gives) require_zero_volume(x, provide, layer);
        if (gives) send_copy(provide, x, layer, scratch.provide_cache, scratch);
        idle_output(x, y, gives, preserve_batch);
        return true;
    }
    // Two teams: an error in the first must not leave the second team waiting for this worker.
    // A receiver that does not provide checks its x as part of the copy (agreed with the team).
    const std::string problem = gives ? std::string() : zero_volume_problem(x, obtain, layer);
    first_error_keeper keep;
    if (gives && provide_first) keep([&] { send_copy(provide, x, layer, scratch.provide_cache, scratch); });
    keep([&] { receive_copy(obtain, y, problem, layer, scratch.obtain_cache, scratch); });
    if (gives && !provide_first) keep([&] { send_copy(provide, x, layer, scratch.provide_cache, scratch); });
    keep.rethrow();
    return true;
}

template <class T>
void sum_in(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x, tensor<T>& y,
            bool preserve_batch, const char* layer, team_scratch<T>& scratch) {
    const bool gives = provide.active();
    const bool gets = obtain.active();
    if (gives && gets && provide == obtain) {
        // Destination that also contributes: its own x is one of the terms (x may be y: the sum
        // then runs in place, the transport reading and writing y).
        if (provide.size() == 1) {
            if (&x != &y) copy_into(x, y);
            return;
        }
        team_sum(provide, &x, &y, false, {}, layer, scratch.provide_cache, scratch);
        return;
    }
    DISTDL_REQUIRE(&x != &y, layer << ": internal error: an in-place sum on world rank "
                                   << provide.world_comm()->rank() << ", which is not the destination of its own term");
    auto give = [&] { team_sum<T>(provide, &x, nullptr, false, {}, layer, scratch.provide_cache, scratch); };
    if (!gets) {
        if (!gives) require_zero_volume(x, provide, layer);
        if (gives) give();
        idle_output(x, y, gives, preserve_batch);
        return;
    }
    DISTDL_REQUIRE(obtain.rank() == 0, layer << ": internal error: the destination is rank " << obtain.rank()
                                             << " of its team, not rank 0");
    // Two teams: an error in the first must not leave the second team waiting for this worker.
    first_error_keeper keep;
    if (gives && provide_first) keep(give);
    // A destination outside the sum contributes −0 (a reduction root must send a term; see
    // team_sum); its check of its own x is agreed with the team, in the same reduction.
    const std::string problem = gives ? std::string() : zero_volume_problem(x, obtain, layer);
    keep([&] { team_sum<T>(obtain, nullptr, &y, false, problem, layer, scratch.obtain_cache, scratch); });
    if (gives && !provide_first) keep(give);
    keep.rethrow();
}

template <class T>
void all_sum(const partition& team, const tensor<T>& x, tensor<T>& y, const char* layer, team_scratch<T>& scratch) {
    if (!team.active()) {
        require_zero_volume(x, team, layer);
        return copy_into(x, y);
    }
    if (team.size() == 1) return copy_into(x, y);
    team_sum(team, &x, &y, true, {}, layer, scratch.provide_cache, scratch);
}

#define DISTDL_TEAM_COLLECTIVES_INSTANTIATE(T)                                                                      \
    template bool copy_out<T>(const partition&, const partition&, bool, const tensor<T>&, tensor<T>&, bool,         \
                              const char*, team_scratch<T>&, bool);                                                 \
    template void sum_in<T>(const partition&, const partition&, bool, const tensor<T>&, tensor<T>&, bool,           \
                            const char*, team_scratch<T>&);                                                         \
    template void all_sum<T>(const partition&, const tensor<T>&, tensor<T>&, const char*, team_scratch<T>&);

DISTDL_TEAM_COLLECTIVES_INSTANTIATE(float)
DISTDL_TEAM_COLLECTIVES_INSTANTIATE(double)

#undef DISTDL_TEAM_COLLECTIVES_INSTANTIATE

}  // namespace distdl::detail
