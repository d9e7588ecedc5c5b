// The box-exchange engine itself (core/detail/box_exchange.hpp), on both transports: an
// all-to-all of rows (contiguous boxes) or columns (strided boxes), forward and reverse (assign
// and add), with and without the call status, once where the transport may meet in one
// all_to_all_v (the simulator, small data) and once kept to messages (meeting limit 0). Both
// must give exactly the expected values, agree on a change, and refuse a problem everywhere.
#include <string>

#include "core/detail/box_exchange.hpp"
#include "core/error.hpp"
#include "tests/common/checks.hpp"
#include "tests/primitives/halo_test_util.hpp"

namespace {

using namespace distdl;
using namespace distdl::detail;

constexpr std::size_t row_length = 3;

// Worker `me` of n: row (or column) q of its source goes to worker q and lands in row (column)
// `me` there; its own row stays put (the self box).
box_exchange_plan all_to_all_plan(std::size_t n, std::size_t me, bool columns) {
    const shape_t shape = columns ? shape_t{row_length, n} : shape_t{n, row_length};
    const auto box_at = [&](std::size_t q) { return columns ? shape_t{0, q} : shape_t{q, 0}; };
    const shape_t extent = columns ? shape_t{row_length, 1} : shape_t{1, row_length};
    box_exchange_plan plan;
    plan.source_shape = plan.dest_shape = shape;
    for (std::size_t q = 0; q < n; ++q) {
        if (q == me) continue;
        plan.sends.push_back({static_cast<int>(q), box_at(q), extent});
        plan.receives.push_back({static_cast<int>(q), box_at(q), extent});
    }
    plan.has_self = true;
    plan.self = {box_at(me), box_at(me), extent};
    return plan;
}

// Element j of the box that worker `from` sends to worker `to`: distinct for every triple.
double value(std::size_t from, std::size_t to, std::size_t j) { return 1000.0 * from + 10.0 * to + j; }

template <class T>
void check_exchange(const std::shared_ptr<communicator>& world, bool columns, std::size_t meeting_limit) {
    const auto n = static_cast<std::size_t>(world->size());
    const auto me = static_cast<std::size_t>(world->rank());
    box_exchange<T> exchange(all_to_all_plan(n, me, columns), 901, 902, meeting_limit);
    const shape_t shape = exchange.plan().source_shape;
    const auto at = [&](tensor<T>& t, std::size_t q, std::size_t j) -> T& { return columns ? t(j, q) : t(q, j); };
    tensor<T> src(shape), expected(shape), dst(shape);
    for (std::size_t q = 0; q < n; ++q)
        for (std::size_t j = 0; j < row_length; ++j) {
            at(src, q, j) = static_cast<T>(value(me, q, j));
            at(expected, q, j) = static_cast<T>(value(q, me, j));
        }
    const std::string what = std::string(columns ? "columns" : "rows") + ", meeting limit " +
                             std::to_string(meeting_limit);

    dst.fill(T(-1));
    exchange.forward(*world, src.data(), dst.data());
    MOVEMENT_CHECK_BITS(dst, expected, what + ": forward");
    dst.fill(T(-1));
    DCHECK(!exchange.forward(*world, src.data(), dst.data(), std::string(), false));
    MOVEMENT_CHECK_BITS(dst, expected, what + ": forward with status");
    DCHECK(exchange.forward(*world, src.data(), dst.data(), std::string(), me == n - 1));  // one changed: all know

    // Reverse of the forward's output: every box goes home, assigned or added to what is there.
    tensor<T> back(shape);
    back.fill(T(7));
    exchange.reverse(*world, expected.data(), back.data(), box_op::assign);
    MOVEMENT_CHECK_BITS(back, src, what + ": reverse assign");
    back.fill(T(7));
    DCHECK(!exchange.reverse(*world, expected.data(), back.data(), box_op::add, std::string(), false));
    tensor<T> added = src + T(7);
    for (std::size_t j = 0; j < row_length; ++j) at(added, me, j) = at(src, me, j);  // the self box is assigned
    MOVEMENT_CHECK_BITS(back, added, what + ": reverse add");

    // A problem on the last worker is refused on every worker; the exchange works afterwards.
    const std::string problem = me == n - 1 ? "the last worker's piece is wrong" : "";
    DCHECK_THROWS(exchange.forward(*world, src.data(), dst.data(), problem, false), invalid_argument,
                  "the last worker's piece is wrong");
    dst.fill(T(-1));
    DCHECK(!exchange.forward(*world, src.data(), dst.data(), std::string(), false));
    MOVEMENT_CHECK_BITS(dst, expected, what + ": forward after a refusal");
}

DISTDL_CHECK(box_exchange_meeting_and_messages_agree, world_size >= 1) {
    for (const bool columns : {false, true})
        for (const std::size_t limit : {meeting_max_bytes, std::size_t{0}}) {
            check_exchange<double>(world, columns, limit);
            check_exchange<float>(world, columns, limit);
        }
}

}  // namespace
