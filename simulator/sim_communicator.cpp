#include "simulator/sim_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "simulator/errors.hpp"

namespace distdl::sim {

namespace {

// Sends are buffered: complete as soon as they exist.
class send_request final : public request_state {};

class recv_request final : public request_state {
  public:
    recv_request(const world* owner, std::shared_ptr<context_state> context, int dest, int source, int tag,
                 std::uint64_t number, void* buf, std::size_t count, dtype type)
        : owner_(owner), context_(std::move(context)), dest_(dest), source_(source), tag_(tag),
          number_(number), buf_(buf), count_(count), type_(type) {}

    const world* owner() const { return owner_; }

    // Caller holds the world lock.
    bool ready() const {
        auto it = context_->channels.find({dest_, source_, tag_});
        return it != context_->channels.end() && it->second.pending.count(number_) > 0;
    }

    // Copies the matched message into the buffer. Caller holds the lock; ready() holds.
    void complete() {
        auto it = context_->channels.find({dest_, source_, tag_});
        auto& ch = it->second;
        auto node = ch.pending.extract(number_);
        const message& m = node.mapped();
        if (m.type != type_ || m.count != count_) {
            std::ostringstream out;
            out << "sim: message mismatch on " << name(*context_) << ": " << who(*context_, dest_) << " receives "
                << count_ << " x " << to_string(type_) << " from " << who(*context_, source_) << " with tag " << tag_
                << ", but " << who(*context_, source_) << " sent " << m.count << " x " << to_string(m.type);
            throw message_mismatch(out.str());
        }
        if (!m.data.empty()) std::memcpy(buf_, m.data.data(), m.data.size());
        // A drained channel is the same as a fresh one: drop it so the map stays small.
        if (ch.pending.empty() && ch.next_send == ch.next_recv) context_->channels.erase(it);
    }

    std::string describe() const {
        return "a message from " + who(*context_, source_) + " with tag " + std::to_string(tag_) + " on " +
               name(*context_);
    }

  private:
    const world* owner_;
    std::shared_ptr<context_state> context_;  // keeps the messages alive until received
    int dest_, source_, tag_;
    std::uint64_t number_;
    void* buf_;
    std::size_t count_;
    dtype type_;
};

}  // namespace

sim_communicator::sim_communicator(std::shared_ptr<world> owner, std::shared_ptr<context_state> context, int rank)
    : world_(std::move(owner)), context_(std::move(context)), rank_(rank) {}

request sim_communicator::do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) {
    message m{type, count, std::vector<unsigned char>(count * size_of(type))};
    if (!m.data.empty()) std::memcpy(m.data.data(), buf, m.data.size());  // the copy that makes it buffered
    auto held = world_->lock();
    world_->throw_if_aborted();
    auto& ch = context_->channels[{dest, rank_, tag}];
    ch.pending.emplace(ch.next_send++, std::move(m));
    world_->notify(context_->members[static_cast<std::size_t>(dest)]);
    return std::make_unique<send_request>();
}

request sim_communicator::do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) {
    auto held = world_->lock();
    world_->throw_if_aborted();
    auto& ch = context_->channels[{rank_, source, tag}];
    return std::make_unique<recv_request>(world_.get(), context_, rank_, source, tag, ch.next_recv++, buf, count, type);
}

void sim_communicator::do_wait_all(std::vector<request>& requests) {
    std::vector<recv_request*> pending;
    for (auto& r : requests) {
        if (dynamic_cast<send_request*>(r.get()) != nullptr) continue;
        auto* recv = dynamic_cast<recv_request*>(r.get());
        DISTDL_REQUIRE(recv != nullptr && recv->owner() == world_.get(),
                       "sim: wait_all was given a request of another transport or another simulated world");
        pending.push_back(recv);
    }
    auto held = world_->lock();
    world_->throw_if_aborted();
    const std::function<bool()> any_ready = [&] {
        return std::any_of(pending.begin(), pending.end(), [](const recv_request* r) { return r->ready(); });
    };
    const std::function<std::string()> describe = [&] {
        std::string out = "waits in wait_all for ";
        for (std::size_t i = 0; i < pending.size(); ++i) out += (i ? " and " : "") + pending[i]->describe();
        return out;
    };
    while (!pending.empty()) {
        world_->wait_until(held, world_rank(), any_ready, describe);
        for (auto it = pending.begin(); it != pending.end();) {
            if ((*it)->ready()) {
                (*it)->complete();
                it = pending.erase(it);
            } else {
                ++it;
            }
        }
    }
}

void sim_communicator::run_collective(collective_call call) {
    const std::uint64_t number = collectives_called_++;
    const int n = size();
    auto held = world_->lock();
    world_->throw_if_aborted();
    auto& slot = context_->collectives[number];
    if (slot.calls.empty()) slot.calls.resize(static_cast<std::size_t>(n));
    slot.calls[static_cast<std::size_t>(rank_)] = std::move(call);
    ++slot.arrived;

    const auto calls_so_far = [&] {
        std::ostringstream out;
        std::vector<int> missing;
        for (int r = 0; r < n; ++r) {
            const auto& c = slot.calls[static_cast<std::size_t>(r)];
            if (c) out << "; " << who(*context_, r) << " called " << describe(*c);
            else missing.push_back(r);
        }
        if (!missing.empty()) out << "; not yet called: ranks " << format_list(missing);
        return out.str();
    };
    const auto mismatch = [&](const std::string& what) {
        return "sim: collective mismatch on " + name(*context_) + " at collective call #" + std::to_string(number) +
               ": " + what + calls_so_far();
    };

    if (slot.failure.empty()) {
        const auto& mine = *slot.calls[static_cast<std::size_t>(rank_)];
        for (const auto& other : slot.calls) {
            if (other && !same_signature(*other, mine)) {
                slot.failure = mismatch("the ranks called different operations or arguments");
                break;
            }
        }
        if (slot.failure.empty() && slot.arrived == n) {
            const auto problems = count_mismatches(slot.calls);
            if (!problems.empty()) {
                std::string what = "all_to_all_v counts disagree (";
                for (std::size_t i = 0; i < problems.size() && i < 8; ++i) what += (i ? "; " : "") + problems[i];
                if (problems.size() > 8) what += "; and " + std::to_string(problems.size() - 8) + " more";
                slot.failure = mismatch(what + ")");
            } else {
                execute(slot.calls);  // every other member is blocked here, its buffers stable
                slot.done = true;
            }
        }
        if (slot.done || !slot.failure.empty()) {
            for (int r = 0; r < n; ++r)
                if (r != rank_ && slot.calls[static_cast<std::size_t>(r)])
                    world_->notify(context_->members[static_cast<std::size_t>(r)]);
        }
    }

    const std::function<bool()> ready = [&] { return slot.done || !slot.failure.empty(); };
    const std::function<std::string()> describe_wait = [&] {
        std::vector<int> arrived, missing;
        for (int r = 0; r < n; ++r) (slot.calls[static_cast<std::size_t>(r)] ? arrived : missing).push_back(r);
        return "waits in " + describe(*slot.calls[static_cast<std::size_t>(rank_)]) + " (collective call #" +
               std::to_string(number) + ") on " + name(*context_) + ", arrived: ranks " + format_list(arrived) +
               ", missing: ranks " + format_list(missing);
    };
    world_->wait_until(held, world_rank(), ready, describe_wait);

    const std::string failure = slot.failure;
    if (++slot.departed == n) context_->collectives.erase(number);
    if (!failure.empty()) throw collective_mismatch(failure);
}

void sim_communicator::do_broadcast(void* buf, std::size_t count, dtype type, int root) {
    collective_call c;
    c.op = collective_op::broadcast;
    c.type = type;
    c.count = count;
    c.root = root;
    c.send = buf;
    c.recv = buf;
    run_collective(std::move(c));
}

void sim_communicator::do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) {
    collective_call c;
    c.op = collective_op::reduce_sum;
    c.type = type;
    c.count = count;
    c.root = root;
    c.send = send;
    c.recv = rank_ == root ? recv : nullptr;
    run_collective(std::move(c));
}

void sim_communicator::do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) {
    collective_call c;
    c.op = collective_op::all_reduce_sum;
    c.type = type;
    c.count = count;
    c.send = send;
    c.recv = recv;
    run_collective(std::move(c));
}

void sim_communicator::do_all_gather(const void* send, void* recv, std::size_t count, dtype type) {
    collective_call c;
    c.op = collective_op::all_gather;
    c.type = type;
    c.count = count;
    c.send = send;
    c.recv = recv;
    run_collective(std::move(c));
}

void sim_communicator::do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                                       const std::vector<std::size_t>& send_displs, void* recv,
                                       const std::vector<std::size_t>& recv_counts,
                                       const std::vector<std::size_t>& recv_displs, dtype type) {
    collective_call c;
    c.op = collective_op::all_to_all_v;
    c.type = type;
    c.send = send;
    c.recv = recv;
    c.send_counts = send_counts;
    c.send_displs = send_displs;
    c.recv_counts = recv_counts;
    c.recv_displs = recv_displs;
    run_collective(std::move(c));
}

void sim_communicator::do_barrier() {
    collective_call c;
    c.op = collective_op::barrier;
    run_collective(std::move(c));
}

std::shared_ptr<communicator> sim_communicator::do_create_sub(const std::vector<int>& ranks) {
    // Only the listed members take part, so the parent's collective numbering cannot be used:
    // the n-th creation over the same member set meets in the same slot (as in MPI, creations
    // over one group must be called in the same order by its members).
    std::vector<int> members_sorted = ranks;
    std::sort(members_sorted.begin(), members_sorted.end());
    const std::uint64_t serial = creations_called_[members_sorted]++;
    const auto key = std::make_pair(members_sorted, serial);

    auto held = world_->lock();
    world_->throw_if_aborted();
    auto& slot = context_->creations[key];
    slot.lists[rank_] = ranks;

    const auto lists_so_far = [&] {
        std::ostringstream out;
        for (const auto& [r, list] : slot.lists) out << "; " << who(*context_, r) << " called create_sub(" << format_list(list) << ')';
        return out.str();
    };
    if (slot.failure.empty()) {
        for (const auto& [r, list] : slot.lists) {
            if (list != ranks) {
                slot.failure = "sim: collective mismatch on " + name(*context_) +
                               ": members of a sub-communicator passed different rank lists" + lists_so_far();
                break;
            }
        }
        if (slot.failure.empty() && slot.lists.size() == ranks.size()) {
            std::vector<int> world_ranks;
            for (int r : ranks) world_ranks.push_back(context_->members[static_cast<std::size_t>(r)]);
            slot.created = std::make_shared<context_state>(world_->next_context_id(), std::move(world_ranks));
        }
        if (slot.created || !slot.failure.empty()) {
            for (const auto& entry : slot.lists)
                if (entry.first != rank_) world_->notify(context_->members[static_cast<std::size_t>(entry.first)]);
        }
    }

    const std::function<bool()> ready = [&] { return slot.created != nullptr || !slot.failure.empty(); };
    const std::function<std::string()> describe_wait = [&] {
        std::vector<int> arrived, missing;
        for (int r : ranks) (slot.lists.count(r) ? arrived : missing).push_back(r);
        return "waits in create_sub(" + format_list(ranks) + ") on " + name(*context_) + ", arrived: ranks " +
               format_list(arrived) + ", missing: ranks " + format_list(missing);
    };
    world_->wait_until(held, world_rank(), ready, describe_wait);

    const auto created = slot.created;
    const std::string failure = slot.failure;
    if (++slot.departed == ranks.size()) context_->creations.erase(key);
    if (!failure.empty()) throw collective_mismatch(failure);
    held.unlock();
    const int position = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
    return std::make_shared<sim_communicator>(world_, created, position);
}

}  // namespace distdl::sim
