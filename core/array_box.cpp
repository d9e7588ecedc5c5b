#include "core/array_box.hpp"

#include <algorithm>
#include <cstring>

#include "core/checked_arithmetic.hpp"
#include "core/error.hpp"

namespace distdl {

bool box_lies_inside(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& start,
                     const std::vector<std::size_t>& extent) {
    bool inside = start.size() == shape.size() && extent.size() == shape.size();
    for (std::size_t d = 0; inside && d < shape.size(); ++d)
        inside = start[d] <= shape[d] && extent[d] <= shape[d] - start[d];
    return inside;
}

strided_layout contiguous_layout(std::size_t bytes) {
    strided_layout out;
    out.run = bytes;
    return out;
}

bool make_layout(const array_box& box, std::size_t element_size, strided_layout& out, const char* what) {
    const std::size_t rank = box.shape.size();
    DISTDL_REQUIRE(box_lies_inside(box.shape, box.start, box.extent), "communicator: " << what << " at " << format_list(box.start) << " of extent "
                                            << format_list(box.extent) << " does not lie inside an array of shape "
                                            << format_list(box.shape));
    // Every offset and stride below is at most the array's bytes: refused when those wrap.
    checked_mul(checked_volume(box.shape, std::string("communicator: ") + what + " array of shape"), element_size,
                std::string("communicator: ") + what + " array bytes");
    out = strided_layout{};
    bool empty = false;
    std::size_t stride = element_size;  // of dimension d, in bytes
    std::size_t run = element_size;
    bool in_run = true;  // every dimension inside d so far continues the run
    // Outer dimensions, innermost first (reversed at the end).
    std::size_t count[strided_layout::max_dims], step[strided_layout::max_dims];
    std::size_t dims = 0;
    for (std::size_t d = rank; d-- > 0;) {
        const std::size_t c = box.extent[d];
        out.offset += box.start[d] * stride;
        if (c == 0) empty = true;
        if (c > 1 && !empty) {
            if (in_run && stride == run) {
                run *= c;
            } else if (dims > 0 && stride == count[dims - 1] * step[dims - 1]) {
                in_run = false;
                count[dims - 1] *= c;  // continues the outer dimension inside it
            } else {
                in_run = false;
                if (dims == strided_layout::max_dims) return false;
                count[dims] = c;
                step[dims] = stride;
                ++dims;
            }
        }
        stride *= box.shape[d];
    }
    if (empty) return true;  // run 0: no bytes
    out.run = run;
    out.dims = dims;
    for (std::size_t k = 0; k < dims; ++k) {
        out.count[k] = count[dims - 1 - k];
        out.stride[k] = step[dims - 1 - k];
    }
    return true;
}

layout_cursor::layout_cursor(const strided_layout& layout)
    : layout_(layout), offset_(layout.offset), left_(layout.bytes() == 0 ? 0 : layout.run) {}

void layout_cursor::advance(std::size_t bytes) {
    offset_ += bytes;
    left_ -= bytes;
    if (left_ != 0) return;
    offset_ -= layout_.run;  // back to the start of the finished run
    for (std::size_t k = layout_.dims; k-- > 0;) {
        if (++index_[k] < layout_.count[k]) {
            offset_ += layout_.stride[k];
            left_ = layout_.run;
            return;
        }
        offset_ -= (layout_.count[k] - 1) * layout_.stride[k];
        index_[k] = 0;
    }
    // Every run is done: left_ stays 0.
}

void copy_layout(void* dst, const strided_layout& dst_layout, const void* src, const strided_layout& src_layout) {
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    if (dst_layout.contiguous() && src_layout.contiguous()) {
        if (src_layout.run > 0) std::memcpy(to + dst_layout.offset, from + src_layout.offset, src_layout.run);
        return;
    }
    layout_cursor s(src_layout), d(dst_layout);
    while (s.left() != 0 && d.left() != 0) {
        const std::size_t n = std::min(s.left(), d.left());
        std::memcpy(to + d.offset(), from + s.offset(), n);
        s.advance(n);
        d.advance(n);
    }
}

}  // namespace distdl
