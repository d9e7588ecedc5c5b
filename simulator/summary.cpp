#include "simulator/summary.hpp"

#include <algorithm>
#include <map>

namespace distdl::sim {

std::string format_ranks(const std::vector<int>& ranks) {
    constexpr std::size_t max_items = 12;
    std::string out = "[";
    std::size_t items = 0;
    for (std::size_t i = 0; i < ranks.size();) {
        if (items == max_items) {
            out += ",... " + std::to_string(ranks.size() - i) + " more";
            break;
        }
        if (items > 0) out += ',';
        ++items;
        // A run of three or more with one positive step: "a-b", or "a-b step d".
        const long step = i + 2 < ranks.size() ? static_cast<long>(ranks[i + 1]) - ranks[i] : 0;
        if (step > 0 && static_cast<long>(ranks[i + 2]) - ranks[i + 1] == step) {
            std::size_t j = i + 2;
            while (j + 1 < ranks.size() && static_cast<long>(ranks[j + 1]) - ranks[j] == step) ++j;
            out += std::to_string(ranks[i]) + '-' + std::to_string(ranks[j]);
            if (step > 1) out += " step " + std::to_string(step);
            i = j + 1;
        } else {
            out += std::to_string(ranks[i]);
            ++i;
        }
    }
    return out + ']';
}

std::string format_long_list(const std::vector<std::size_t>& values) {
    std::string out = "[";
    const std::size_t shown = values.size() <= 16 ? values.size() : 8;
    for (std::size_t i = 0; i < shown; ++i) out += (i ? "," : "") + std::to_string(values[i]);
    if (shown < values.size()) out += ",... (" + std::to_string(values.size()) + " entries)";
    return out + ']';
}

namespace {

// "waits in ..." -> "wait in ...", "has finished" -> "have finished".
std::string plural(const std::string& text) {
    if (text.rfind("waits", 0) == 0) return "wait" + text.substr(5);
    if (text.rfind("has ", 0) == 0) return "have " + text.substr(4);
    if (text.rfind("is ", 0) == 0) return "are " + text.substr(3);
    return text;
}

}  // namespace

std::string summarize_ranks(const std::vector<std::pair<int, std::string>>& rank_texts, std::size_t max_groups) {
    std::map<std::string, std::vector<int>> groups;
    for (const auto& [rank, text] : rank_texts) groups[text].push_back(rank);
    std::vector<std::pair<const std::string*, std::vector<int>*>> order;
    for (auto& [text, ranks] : groups) {
        std::sort(ranks.begin(), ranks.end());
        order.emplace_back(&text, &ranks);
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        if (a.second->size() != b.second->size()) return a.second->size() > b.second->size();
        return a.second->front() < b.second->front();
    });
    std::string out;
    std::size_t rest_ranks = 0;
    for (std::size_t g = 0; g < order.size(); ++g) {
        const auto& ranks = *order[g].second;
        if (g >= max_groups) {
            rest_ranks += ranks.size();
            continue;
        }
        if (g > 0) out += "; ";
        if (ranks.size() == 1) out += "rank " + std::to_string(ranks.front()) + ' ' + *order[g].first;
        else
            out += "ranks " + format_ranks(ranks) + " (" + std::to_string(ranks.size()) + " ranks) " +
                   plural(*order[g].first);
    }
    if (order.size() > max_groups)
        out += "; and " + std::to_string(rest_ranks) + " more ranks in " + std::to_string(order.size() - max_groups) +
               " other states";
    return out;
}

}  // namespace distdl::sim
