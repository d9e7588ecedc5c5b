#pragma once
// Random cases (distdl-verify --random): case documents in the case-file format (DESIGN §6)
// over the primitives (Broadcast, SumReduce, AllSumReduce, Repartition, HaloExchange) and the
// layers (Linear, FeatureConvNd, ChannelConvNd, GeneralConvNd, ConvNd, MaxPoolNd, AvgPoolNd),
// float32 and float64, 1-4 dimensions. Partition shapes, tensor extents (also 0), kernel sizes,
// strides, paddings (also windows of padding only), dilations, channel counts (also the
// 16-channel blocks of oneDNN) and batches are drawn independently; each partition sits on its
// own random list of world ranks (overlapping, in any order, with idle workers). Every case
// must pass: the generator only draws configurations the layers accept (the kernel fits the
// padded input; Broadcast and SumReduce partitions follow the reduction rules, with and without
// transpose flags, shorter partitions and preserve_batch; Repartition never splits a size-1
// dimension and takes balanced and unbalanced inputs).
//
// The same (count, seed, max_world) gives the same cases on every platform and rank (own
// generator, no std:: distributions), so an MPI job's ranks agree and a failure reproduces;
// `--random-out` writes the cases as files to keep one.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace distdl::verify {

// `count` case documents named "random/<seed>/<index>_<layer>", world sizes 1..max_world
// (at least 1).
std::vector<nlohmann::json> random_case_documents(std::size_t count, std::uint64_t seed, int max_world);

}  // namespace distdl::verify
