#include "simulator/context.hpp"

#include "core/error.hpp"
#include "simulator/summary.hpp"

namespace distdl::sim {

channel& context_state::channel_at(const std::tuple<int, int, int>& key) {
    auto it = channels.find(key);
    if (it != channels.end()) return it->second;
    if (spare_channels_.empty()) return channels.emplace(key, channel{}).first->second;
    auto node = std::move(spare_channels_.back());
    spare_channels_.pop_back();
    node.key() = key;
    node.mapped().next_send = 0;
    node.mapped().next_recv = 0;
    node.mapped().pending.clear();  // (a dropped channel is drained: nothing to clear)
    node.mapped().posted.clear();
    return channels.insert(std::move(node)).position->second;
}

void context_state::drop_channel(channel_map::iterator it) {
    auto node = channels.extract(it);
    if (spare_channels_.size() < spare_nodes) spare_channels_.push_back(std::move(node));
}

message& context_state::add_message(channel& ch, std::uint64_t number, message&& m) {
    if (spare_messages_.empty()) return ch.pending.emplace(number, std::move(m)).first->second;
    auto node = std::move(spare_messages_.back());
    spare_messages_.pop_back();
    node.key() = number;
    node.mapped() = std::move(m);
    return ch.pending.insert(std::move(node)).position->second;
}

message context_state::take_message(channel& ch, std::uint64_t number) {
    auto node = ch.pending.extract(number);
    message m = std::move(node.mapped());
    if (spare_messages_.size() < spare_nodes) spare_messages_.push_back(std::move(node));
    return m;
}

void context_state::add_posted(channel& ch, std::uint64_t number, const posted_receive& r) {
    if (spare_posted_.empty()) {
        ch.posted.emplace(number, r);
        return;
    }
    auto node = std::move(spare_posted_.back());
    spare_posted_.pop_back();
    node.key() = number;
    node.mapped() = r;
    ch.posted.insert(std::move(node));
}

void context_state::erase_posted(channel& ch, posted_map::iterator it) {
    auto node = ch.posted.extract(it);
    if (spare_posted_.size() < spare_nodes) spare_posted_.push_back(std::move(node));
}

std::string name(const context_state& context) {
    return "context " + std::to_string(context.id) + " (world ranks " + format_ranks(context.members) + ")";
}

std::string who(const context_state& context, int rank) {
    std::string out = "rank " + std::to_string(rank);
    if (context.id != 0) out += " (world rank " + std::to_string(context.members[static_cast<std::size_t>(rank)]) + ")";
    return out;
}

}  // namespace distdl::sim
