#pragma once
// What a layer contributes to the harness: ONE table entry (see registry.cpp) naming the
// layer, the partitions and options its case files may carry, and a factory that, on one
// worker, builds the distributed module and states its serial meaning. Everything else
// (loading, input generation, the two checks, transports, reports) is shared.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/module.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl::verify {

struct case_spec;

// How the loader validates one entry of "options".
enum class option_kind {
    boolean,        // true / false
    count,          // a non-negative integer
    index_list,     // a list of non-negative integers (e.g. axes_reduce)
    per_dimension,  // one non-negative integer for all dimensions, or one per dimension
};

struct option_spec {
    std::string name;
    option_kind kind = option_kind::boolean;
    bool required = false;
};

class serial_memo;

// The partitions of one case as every worker of the case's world holds them (inactive where
// the worker is not a member).
struct case_world {
    partition world;
    std::map<std::string, cartesian_partition> partitions;
    // The case's serial side (serial_memo.hpp), shared by its workers in this process. Under
    // input_key: every worker's input piece, std::vector<tensor<T>> (case_problem::input at the
    // case's seed).
    serial_memo* serial = nullptr;
    static constexpr const char* input_key = "input";

    const cartesian_partition& get(const std::string& name) const;
    bool has(const std::string& name) const { return partitions.count(name) != 0; }
};

// Layers with parameters (DESIGN §5): what the harness needs beyond forward and adjoint.
// After the first forward(x) and adjoint(probe) of the freshly built layer, every worker's
// parameters() must equal, in order, the reference's list for its world rank: names, values
// (bit-exact: the initialisation is partition independent) and gradients (sequential
// equivalence). Then the dot-product test runs once per name, linearised: the parameter
// under test is set to random values on its owners, every offset (bias) to zero, and the
// test with respect to an offset uses x = 0; the test with respect to the input runs with
// the offsets zero.
template <class T>
struct parameter_hook {
    std::vector<std::string> names;    // every parameter name the layer has, e.g. {"weight", "bias"}
    std::vector<std::string> offsets;  // the names that add a constant, e.g. {"bias"}
    // For every world rank: the parameters it owns, after forward(x) and adjoint(dy).
    using reference_fn = std::function<std::vector<std::vector<parameter<T>>>(const std::vector<tensor<T>>& x,
                                                                               const std::vector<tensor<T>>& dy)>;
    reference_fn reference;
    // Optional: the gradients' sums of |terms| from |x| and |dy|, called after reference() on the
    // same case. Absent, reference() serves (a single layer's gradients are bilinear in x and dy);
    // a chain of layers needs its intermediate tensors' own bounds.
    reference_fn reference_bound;
};

// One worker's view of a case. All piece lists are indexed by rank in the case's world and
// hold every worker's piece: each worker evaluates the serial meaning for the whole world,
// which keeps the reference free of communication (cases are small).
template <class T>
struct case_problem {
    std::unique_ptr<distdl::module<T>> layer;  // the distributed module under test
    // Every worker's input piece for a seed (zero-volume where a worker holds none).
    std::function<std::vector<tensor<T>>(std::uint64_t seed)> input;
    // The reference: forward of all input pieces, adjoint of all output pieces.
    std::function<std::vector<tensor<T>>(const std::vector<tensor<T>>&)> forward;
    std::function<std::vector<tensor<T>>(const std::vector<tensor<T>>&)> adjoint;
    // Optional, for arithmetic: the same reference with every parameter replaced by its absolute
    // value (without parameters and with coefficients >= 0, e.g. sums and averages, the
    // reference itself); the harness passes it |x| (|dy|), which gives each element's sum of
    // |terms|, the scale of its rounding. The tolerance is relative to the larger of that and the
    // reference's own values, which may cancel far below it (a few terms of both signs).
    std::function<std::vector<tensor<T>>(const std::vector<tensor<T>>&)> forward_bound;
    std::function<std::vector<tensor<T>>(const std::vector<tensor<T>>&)> adjoint_bound;
    // Pure data movement must match bit for bit; arithmetic within a relative tolerance.
    bool forward_exact = false;
    bool adjoint_exact = false;
    // Set by layers with parameters (null for data movement).
    std::shared_ptr<const parameter_hook<T>> parameters;
};

template <class T>
// The spec outlives the problem, so the problem's functions may refer to it instead of copying
// its worker lists (the simulator runs every worker of a case in one process).
using problem_factory = std::function<case_problem<T>(const case_spec&, const case_world&)>;

struct layer_runner {
    std::string layer;                          // the case file's "layer", e.g. "Broadcast"
    std::vector<std::string> partitions;        // required partitions, e.g. {"P_x", "P_y"}
    std::vector<std::string> optional_partitions;
    std::vector<option_spec> options;
    bool accepts_input_split = false;
    bool accepts_input_shape = false;  // the case key "input_shape": "given" or "learnt"
    // May be a stage of a Sequential case: x_shape is the global input, and the output is
    // balanced over P_y where the layer has one, else over P_x.
    bool chainable = false;
    // Sequential: the case lists "stages" and names its partitions freely (the stages map them).
    bool takes_stages = false;
    // per_dimension options count the dimensions of x_shape after this many leading ones
    // (0 for HaloExchange, 2 for convolutions: batch and channels).
    std::size_t leading_dims = 0;
    problem_factory<float> make_float;
    problem_factory<double> make_double;
};

// The runner's factory of element type T.
template <class T>
const problem_factory<T>& factory_of(const layer_runner& runner) {
    if constexpr (std::is_same_v<T, float>) return runner.make_float;
    else return runner.make_double;
}

}  // namespace distdl::verify
