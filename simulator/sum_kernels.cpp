#include "simulator/sum_kernels.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace distdl::sim {

namespace {

template <class T>
void fold_typed(void* out, const void* const* terms, std::size_t term_count, std::size_t count) {
    constexpr std::size_t block = 64 / sizeof(T);  // one cache line
    auto* o = static_cast<T*>(out);
    const auto term = [&](std::size_t r) { return static_cast<const T*>(terms[r]); };
    std::size_t i = 0;
    for (; i + block <= count; i += block) {
        T line[block];
        const T* first = term(0) + i;
        for (std::size_t j = 0; j < block; ++j) line[j] = first[j];
        for (std::size_t r = 1; r < term_count; ++r) {
            const T* next = term(r) + i;
            for (std::size_t j = 0; j < block; ++j) line[j] += next[j];
        }
        for (std::size_t j = 0; j < block; ++j) o[i + j] = line[j];
    }
    for (; i < count; ++i) {
        T sum = term(0)[i];
        for (std::size_t r = 1; r < term_count; ++r) sum += term(r)[i];
        o[i] = sum;
    }
}

}  // namespace

void fold_sum(void* out, const void* const* terms, std::size_t term_count, std::size_t count, dtype type) {
    if (count == 0 || term_count == 0) return;
    if (term_count == 1) {
        if (out != terms[0]) std::memcpy(out, terms[0], count * size_of(type));
        return;
    }
    switch (type) {
        case dtype::float32: return fold_typed<float>(out, terms, term_count, count);
        case dtype::float64: return fold_typed<double>(out, terms, term_count, count);
        case dtype::int32: return fold_typed<std::int32_t>(out, terms, term_count, count);
        case dtype::int64: return fold_typed<std::int64_t>(out, terms, term_count, count);
        case dtype::uint64: return fold_typed<std::uint64_t>(out, terms, term_count, count);
        case dtype::byte: break;
    }
    throw invalid_argument("sim: cannot sum " + to_string(type));
}

}  // namespace distdl::sim
