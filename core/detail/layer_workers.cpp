#include "core/detail/layer_workers.hpp"

#include <vector>

namespace distdl::detail {

std::vector<char> world_membership(std::initializer_list<const partition*> parts) {
    std::vector<char> in(static_cast<std::size_t>((*parts.begin())->world_comm()->size()), 0);
    for (const partition* p : parts)
        for (int w : p->members()) in[static_cast<std::size_t>(w)] = 1;
    return in;
}

std::shared_ptr<communicator> layer_workers_comm(std::initializer_list<const partition*> parts) {
    const partition world = partition::world((*parts.begin())->world_comm());
    const std::vector<char> in = world_membership(parts);
    std::vector<int> workers;
    for (int w = 0; w < world.size(); ++w)
        if (in[static_cast<std::size_t>(w)]) workers.push_back(w);
    return world.create_partition_inclusive(workers).comm();
}

std::string first_problem(const std::string& first, const std::string&, std::uint64_t) { return first; }

}  // namespace distdl::detail
