#include "core/detail/argument_agreement.hpp"

#include <algorithm>
#include <sstream>

#include "core/detail/dtype_code.hpp"
#include "core/error.hpp"

namespace distdl::detail {

namespace {

constexpr std::size_t digest_words = 2;
constexpr std::size_t digest_bits = 64 * digest_words;
// Distinct argument records named in a message; further ones are only counted.
constexpr std::size_t max_reported_records = 4;

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct decoded_field {
    std::uint64_t kind = 0;
    std::vector<std::uint64_t> values;
    bool operator==(const decoded_field&) const = default;
};

// The fields of an encoded record; empty when the record is malformed.
std::vector<decoded_field> decode(const std::vector<std::uint64_t>& record) {
    std::vector<decoded_field> out;
    std::size_t i = 0;
    while (i < record.size()) {
        if (record.size() - i < 2 || record[i + 1] > record.size() - i - 2) return {};
        decoded_field f{record[i], {record.begin() + static_cast<std::ptrdiff_t>(i + 2),
                                    record.begin() + static_cast<std::ptrdiff_t>(i + 2 + record[i + 1])}};
        i += 2 + record[i + 1];
        out.push_back(std::move(f));
    }
    return out;
}

std::string show(const decoded_field& f) {
    switch (f.kind) {
        case 2: return f.values.empty() ? "?" : std::to_string(f.values.front());
        case 3: return f.values.empty() ? "?" : (f.values.front() ? "true" : "false");
        case 4: return f.values.empty() ? "?" : dtype_name(f.values.front());
        case 5: return format_rank_set(std::vector<int>(f.values.begin(), f.values.end()));
        case 6: return std::string(f.values.begin(), f.values.end());
        default: return format_list(f.values);
    }
}

}  // namespace

std::string format_rank_set(const std::vector<int>& ranks) {
    std::ostringstream out;
    out << '[';
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        out << (i ? "," : "") << ranks[i];
        if (j > i) out << (j == i + 1 ? "," : "-") << ranks[j];
        i = j + 1;
    }
    out << ']';
    return out.str();
}

argument_agreement::argument_agreement(std::string module_name) : module_name_(std::move(module_name)) {
    add("the module", kind::text, std::vector<std::uint64_t>(module_name_.begin(), module_name_.end()));
}

void argument_agreement::add(std::string name, kind k, const std::vector<std::uint64_t>& values) {
    names_.push_back(std::move(name));
    record_.push_back(static_cast<std::uint64_t>(k));
    record_.push_back(values.size());
    record_.insert(record_.end(), values.begin(), values.end());
}

argument_agreement& argument_agreement::list(std::string name, const std::vector<std::size_t>& values) {
    add(std::move(name), kind::list, std::vector<std::uint64_t>(values.begin(), values.end()));
    return *this;
}

argument_agreement& argument_agreement::number(std::string name, std::uint64_t value) {
    add(std::move(name), kind::number, {value});
    return *this;
}

argument_agreement& argument_agreement::flag(std::string name, bool value) {
    add(std::move(name), kind::flag, {value ? 1u : 0u});
    return *this;
}

argument_agreement& argument_agreement::element_type(dtype type) {
    add("the element type", kind::element_type, {static_cast<std::uint64_t>(type)});
    return *this;
}

argument_agreement& argument_agreement::partition(const std::string& name, const cartesian_partition& p) {
    list(name + " shape", p.shape());
    const std::vector<int>& members = p.members();
    add(name + " workers", kind::ranks, std::vector<std::uint64_t>(members.begin(), members.end()));
    return *this;
}

std::vector<std::uint64_t> argument_agreement::digest(const std::vector<std::uint64_t>& record) {
    std::vector<std::uint64_t> out(digest_words);
    for (std::size_t w = 0; w < digest_words; ++w) {
        std::uint64_t h = splitmix(0x6a09e667f3bcc908ULL * (w + 1) ^ record.size());
        for (auto v : record) h = splitmix(h ^ splitmix(v + w));
        out[w] = h;
    }
    return out;
}

void argument_agreement::require(communicator& world) const {
    const int n = world.size();
    if (n <= 1) return;
    // Every rank agrees iff each digest bit is set on no rank or on all of them; the decision
    // depends only on the reduced counts, so every rank takes the same branch.
    const auto mine = digest(record_);
    std::vector<std::uint64_t> bits(digest_bits), counts(digest_bits);
    for (std::size_t b = 0; b < digest_bits; ++b) bits[b] = (mine[b / 64] >> (b % 64)) & 1u;
    world.all_reduce_sum(bits.data(), counts.data(), digest_bits, dtype::uint64);
    const auto all = static_cast<std::uint64_t>(n);
    if (std::all_of(counts.begin(), counts.end(), [&](std::uint64_t c) { return c == 0 || c == all; })) return;

    // They disagree: collect the distinct records, each from the lowest rank not yet placed.
    struct group {
        std::vector<std::uint64_t> record;
        std::vector<int> ranks;
    };
    std::vector<group> groups;
    std::vector<char> placed(static_cast<std::size_t>(n), 0);
    bool me_placed = false;
    const int me = world.rank();
    int representative = 0;
    while (representative < n && groups.size() < max_reported_records) {
        std::vector<std::uint64_t> record = me == representative ? record_ : std::vector<std::uint64_t>{};
        std::uint64_t length = record.size();
        world.broadcast(&length, 1, representative);
        record.resize(length);
        if (length > 0) world.broadcast(record.data(), length, representative);
        const bool match = !me_placed && digest(record) == mine;
        me_placed = me_placed || match;
        // One bit per rank, each set by its own rank only, so the sum is the union (n/8 bytes).
        const std::size_t words = (static_cast<std::size_t>(n) + 63) / 64;
        std::vector<std::uint64_t> mark(words, 0), marked(words, 0);
        if (match) mark[static_cast<std::size_t>(me) / 64] = std::uint64_t{1} << (me % 64);
        world.all_reduce_sum(mark.data(), marked.data(), words, dtype::uint64);
        group g{std::move(record), {}};
        for (int r = 0; r < n; ++r)
            if ((marked[static_cast<std::size_t>(r) / 64] >> (r % 64)) & 1u) {
                g.ranks.push_back(r);
                placed[static_cast<std::size_t>(r)] = 1;
            }
        groups.push_back(std::move(g));
        while (representative < n && placed[static_cast<std::size_t>(representative)]) ++representative;
    }
    std::vector<int> unplaced;
    for (int r = 0; r < n; ++r)
        if (!placed[static_cast<std::size_t>(r)]) unplaced.push_back(r);

    std::vector<std::vector<decoded_field>> fields;
    for (const auto& g : groups) fields.push_back(decode(g.record));
    std::ostringstream msg;
    const auto same_field = [&](std::size_t f) {
        return std::all_of(fields.begin(), fields.end(),
                           [&](const auto& fs) { return fs.size() > f && fs[f] == fields.front()[f]; });
    };
    if (!same_field(0)) {
        // Other modules: their other fields do not line up, and each names itself otherwise.
        msg << "workers construct different modules:";
        for (std::size_t g = 0; g < groups.size(); ++g)
            msg << (g ? "," : "") << " " << (fields[g].empty() ? "?" : show(fields[g][0])) << " on world ranks "
                << format_rank_set(groups[g].ranks);
        if (!unplaced.empty()) msg << " (and others on world ranks " << format_rank_set(unplaced) << ")";
        throw invalid_argument(msg.str());
    }
    msg << module_name_ << ": workers disagree";
    bool named = false;
    for (std::size_t f = 0; f < names_.size(); ++f) {
        const bool present = std::all_of(fields.begin(), fields.end(), [&](const auto& fs) { return fs.size() > f; });
        if (!present) break;
        if (same_field(f)) continue;
        // A partition's workers after its shape: other shapes have other workers anyway.
        if (fields.front()[f].kind == static_cast<std::uint64_t>(kind::ranks) && !same_field(f - 1)) continue;
        msg << (named ? "; and" : "") << " on " << names_[f] << ":";
        for (std::size_t g = 0; g < groups.size(); ++g)
            msg << (g ? "," : "") << " " << show(fields[g][f]) << " on world ranks " << format_rank_set(groups[g].ranks);
        named = true;
    }
    if (!named) msg << " on the number or kind of their arguments";
    if (!unplaced.empty()) msg << " (and other values on world ranks " << format_rank_set(unplaced) << ")";
    throw invalid_argument(msg.str());
}

}  // namespace distdl::detail
