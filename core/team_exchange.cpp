#include "core/team_exchange.hpp"

#include <algorithm>
#include <sstream>

#include "core/dtype_agreement.hpp"
#include "core/error.hpp"

namespace distdl::detail {

namespace {

// Header words: [dtype, contributes, rank, extent 0, ..., extent max_header_rank-1].
constexpr std::size_t header_words = 3 + max_header_rank;

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

std::size_t batch_of(const shape_t& shape) { return shape.empty() ? 0 : shape[0]; }

template <class T>
tensor<T> idle_output(const tensor<T>& x, bool provided, bool preserve_batch) {
    if (provided) return zero_volume<T>(batch_of(shape_of(x)), preserve_batch);
    return x;  // active in neither team: a copy of the (zero-volume) input
}

// Root of `team`: sends the header and then the data of x to every member.
template <class T>
void send_copy(const partition& team, const tensor<T>& x, const char* layer, exchange_scratch<T>& scratch) {
    DISTDL_REQUIRE(team.rank() == 0, layer << ": internal error: the source is rank " << team.rank()
                                           << " of its team, not rank 0");
    encode_header(scratch.header, &x);
    team.comm()->broadcast(scratch.header.data(), header_words, 0);
    DISTDL_REQUIRE(x.dimension() <= max_header_rank, layer << ": tensor of rank " << x.dimension() << "; at most "
                                                           << max_header_rank << " dimensions are supported");
    // The root of a broadcast only reads its buffer; sending straight from x avoids a copy.
    team.comm()->broadcast(const_cast<T*>(x.data()), x.size(), 0);
}

// Member of `team` other than its root: receives the header, then the data.
template <class T>
tensor<T> receive_copy(const partition& team, const char* layer, exchange_scratch<T>& scratch) {
    scratch.header.assign(header_words, 0);
    team.comm()->broadcast(scratch.header.data(), header_words, 0);
    tensor<T> y(decode_header<T>(scratch.header.data(), team.members().front(), layer));
    team.comm()->broadcast(y.data(), y.size(), 0);
    return y;
}

// Every member of `team` learns the shape the contributors (mine non-null) hold and checks
// that they agree, so all members throw together or none does.
template <class T>
shape_t agree_on_shape(const partition& team, const tensor<T>* mine, const char* layer, exchange_scratch<T>& scratch) {
    encode_header(scratch.header, mine);
    const auto n = static_cast<std::size_t>(team.size());
    scratch.gathered.resize(header_words * n);
    team.comm()->all_gather(scratch.header.data(), scratch.gathered.data(), header_words, dtype::uint64);
    shape_t agreed;
    int first = -1;
    for (std::size_t r = 0; r < n; ++r) {
        const std::uint64_t* words = scratch.gathered.data() + r * header_words;
        if (words[1] == 0) continue;
        const int who = team.members()[r];
        shape_t shape = decode_header<T>(words, who, layer);
        if (first < 0) {
            agreed = std::move(shape);
            first = who;
        } else {
            DISTDL_REQUIRE(shape == agreed, layer << ": tensors summed together must have one shape, but world rank "
                                                  << first << " holds " << format_list(agreed) << " and world rank "
                                                  << who << " holds " << format_list(shape));
        }
    }
    DISTDL_REQUIRE(first >= 0, layer << ": internal error: a team with no contributing worker");
    return agreed;
}

}  // namespace

template <class T>
tensor<T> copy_out(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x,
                   bool preserve_batch, const char* layer, exchange_scratch<T>& scratch) {
    const bool gives = provide.active();
    const bool gets = obtain.active();
    if (gives && gets && provide == obtain) {
        // Source of its own copy: the output is a clone of x, sent on from the clone.
        tensor<T> y = x;
        if (provide.size() > 1) send_copy(provide, y, layer, scratch);
        return y;
    }
    if (!gets) {
        if (gives) send_copy(provide, x, layer, scratch);
        return idle_output(x, gives, preserve_batch);
    }
    if (gives && provide_first) send_copy(provide, x, layer, scratch);
    tensor<T> y = receive_copy(obtain, layer, scratch);
    if (gives && !provide_first) send_copy(provide, x, layer, scratch);
    return y;
}

template <class T>
tensor<T> sum_in(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x,
                 bool preserve_batch, const char* layer, exchange_scratch<T>& scratch) {
    const bool gives = provide.active();
    const bool gets = obtain.active();
    if (gives && gets && provide == obtain) {
        // Destination that also contributes: its own x is one of the terms.
        if (provide.size() == 1) return x;
        tensor<T> y(agree_on_shape(provide, &x, layer, scratch));
        provide.comm()->reduce_sum(x.data(), y.data(), y.size(), dtype_of<T>(), 0);
        return y;
    }
    auto give = [&] {
        agree_on_shape(provide, &x, layer, scratch);
        provide.comm()->reduce_sum(x.data(), nullptr, x.size(), dtype_of<T>(), 0);
    };
    if (!gets) {
        if (gives) give();
        return idle_output(x, gives, preserve_batch);
    }
    if (gives && provide_first) give();
    DISTDL_REQUIRE(obtain.rank() == 0, layer << ": internal error: the destination is rank " << obtain.rank()
                                             << " of its team, not rank 0");
    tensor<T> y(agree_on_shape<T>(obtain, nullptr, layer, scratch));
    // A destination outside the sum contributes zeros (the interface has no in-place reduce).
    if (scratch.zeros.size() < y.size()) scratch.zeros.assign(y.size(), T(0));
    obtain.comm()->reduce_sum(scratch.zeros.data(), y.data(), y.size(), dtype_of<T>(), 0);
    if (gives && !provide_first) give();
    return y;
}

template <class T>
tensor<T> all_sum(const partition& team, const tensor<T>& x, const char* layer, exchange_scratch<T>& scratch) {
    if (!team.active() || team.size() == 1) return x;
    tensor<T> y(agree_on_shape(team, &x, layer, scratch));
    team.comm()->all_reduce_sum(x.data(), y.data(), y.size(), dtype_of<T>());
    return y;
}

#define DISTDL_TEAM_EXCHANGE_INSTANTIATE(T)                                                                       \
    template tensor<T> copy_out<T>(const partition&, const partition&, bool, const tensor<T>&, bool, const char*, \
                                   exchange_scratch<T>&);                                                        \
    template tensor<T> sum_in<T>(const partition&, const partition&, bool, const tensor<T>&, bool, const char*,   \
                                 exchange_scratch<T>&);                                                          \
    template tensor<T> all_sum<T>(const partition&, const tensor<T>&, const char*, exchange_scratch<T>&);

DISTDL_TEAM_EXCHANGE_INSTANTIATE(float)
DISTDL_TEAM_EXCHANGE_INSTANTIATE(double)

#undef DISTDL_TEAM_EXCHANGE_INSTANTIATE

}  // namespace distdl::detail
