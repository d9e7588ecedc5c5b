#pragma once
// Short texts about many ranks: a diagnostic of a world of 4,096 ranks must stay readable, so
// rank lists collapse runs into ranges and ranks that say the same thing are named together.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace distdl::sim {

// "[0-3,7,9-4095]", "[0-992 step 32]": in the given order, runs of three or more with one
// positive step collapsed; after twelve items the rest is counted ("[...,... 731 more]").
std::string format_ranks(const std::vector<int>& ranks);

// A list of counts or displacements: the values themselves up to 16 entries, else the first
// eight and how many there are ("[3,3,3,3,3,3,3,3,... (4096 entries)]").
std::string format_long_list(const std::vector<std::size_t>& values);

// One line per distinct text: "rank 5 waits in ..." or "ranks [0-4,6-4095] (4095 ranks) wait
// in ..." (a leading "waits"/"has"/"is" becomes "wait"/"have"/"are" for several ranks), largest groups
// first, ties by lowest rank, joined with "; ". After `max_groups` groups the rest is counted:
// "; and 12 more ranks in 7 other states".
std::string summarize_ranks(const std::vector<std::pair<int, std::string>>& rank_texts, std::size_t max_groups = 12);

}  // namespace distdl::sim
