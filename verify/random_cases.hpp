#pragma once
// Random cases (distdl-verify --random): case documents in the case-file format (DESIGN §6)
// over the primitives (Broadcast, SumReduce, AllSumReduce, Repartition, HaloExchange) and the
// layers (Linear, FeatureConvNd, ChannelConvNd, GeneralConvNd, ConvNd, MaxPoolNd, AvgPoolNd) and,
// one case in 13, Sequential chains of them (random_sequential.hpp), float32 and float64, 1-4 dimensions. Partition shapes, tensor extents (also 0), kernel sizes,
// strides, paddings (also windows of padding only), dilations, channel counts (also the
// 16-channel blocks of oneDNN) and batches are drawn independently, and whether a convolution or
// pooling is given the input shape or learns it at the first forward; per-dimension options are
// written as lists, as one number for all dimensions, or left to their defaults; each partition
// sits on its own random list of world ranks (overlapping, in any order, with idle workers). A
// case draws configurations the layers accept (the kernel fits the padded input; Broadcast and
// SumReduce partitions follow the reduction rules, with and without transpose flags, shorter
// partitions and preserve_batch; Repartition never splits a size-1 dimension and takes balanced
// and unbalanced inputs) and must pass; or, about one in seven but no chain (named ..._refused), is then
// spoilt in one way its layer must refuse on every worker, and expects the refusal's text: a kernel
// longer than the padded input, a stride of 0, P_w split against P_x and P_y, P_y without P_w
// or P_w without P_y (the selector), other channels than in_channels (in the given input shape,
// or in x's pieces when the shape is learnt), an axis out of range (AllSumReduce), partitions
// of different ranks (Repartition), a Broadcast source or SumReduce destination of more
// dimensions than the other side.
//
// The same (count, seed, max_world) gives the same cases on every platform and rank (own
// generator, no std:: distributions), so an MPI job's ranks agree and a failure reproduces;
// `--random-out` writes the cases as files to keep one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace distdl::verify {

// `count` case documents named "random/<seed>/<index>_<layer>" (+ "_refused"), world sizes 1..max_world
// (at least 1).
std::vector<nlohmann::json> random_case_documents(std::size_t count, std::uint64_t seed, int max_world);

// Whether a case name is a random case's: such a case has no file of its own (distdl-verify
// gives it a file name for messages and --random-out only).
inline bool is_random_case_name(const std::string& name) { return name.rfind("random/", 0) == 0; }

}  // namespace distdl::verify
