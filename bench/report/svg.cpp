#include "bench/report/svg.hpp"

#include <algorithm>
#include <cmath>

#include "bench/report/format.hpp"

namespace distdl::bench::report {

namespace {

// Text for an SVG (XML) element: '<' and '&' would start markup.
std::string xml_text(const std::string& text) {
    std::string out;
    for (const char c : text) out += c == '<' ? "&lt;" : c == '&' ? "&amp;" : c == '>' ? "&gt;" : std::string(1, c);
    return out;
}

}  // namespace

void write_svg(std::ostream& out, const results& r) {
    struct bar {
        std::string name;
        double ratio;
        std::optional<double> target;
    };
    std::vector<bar> bars;
    for (const auto& [name, w] : r.workloads)
        if (auto q = w.ratio()) bars.push_back({name, *q, target_of(name, w)});
    // The axis ends at 16x at most: latency-bound ratios against memcpy (thousands) would
    // squash the rest; longer bars end at the edge with their value written after them.
    double top = 4;
    for (const auto& b : bars) top = std::max(top, std::min(b.ratio, 16.0));
    const double lo = std::log2(0.25), hi = std::ceil(std::log2(top));
    const int label_w = 300, plot_w = 560, row_h = 16, head = 30;
    const int height = head + row_h * static_cast<int>(bars.size()) + 20;
    auto x_of = [&](double ratio) {
        const double v = std::clamp(std::log2(ratio), lo, hi);
        return label_w + (v - lo) / (hi - lo) * plot_w;
    };
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label_w + plot_w + 70 << "\" height=\"" << height
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
        << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"4\" y=\"14\" font-size=\"13\">ours / baseline time (log scale; 1 = baseline speed)</text>\n";
    for (double g = 0.25; g <= std::exp2(hi) + 1e-9; g *= 2) {
        const double x = x_of(g);
        out << "<line x1=\"" << x << "\" y1=\"" << head - 6 << "\" x2=\"" << x << "\" y2=\"" << height - 16
            << "\" stroke=\"" << (g == 1 ? "black" : "#ddd") << "\"/>\n<text x=\"" << x << "\" y=\"" << height - 4
            << "\" text-anchor=\"middle\">" << g << "</text>\n";
    }
    int row = 0;
    for (const auto& [name, ratio, target] : bars) {
        const double y = head + row++ * row_h;
        const char* colour = !target ? "#999" : ratio <= *target ? "#3a3" : "#d33";
        const double x0 = x_of(0.25), x1 = x_of(ratio);
        out << "<text x=\"" << label_w - 4 << "\" y=\"" << y + 11 << "\" text-anchor=\"end\">" << xml_text(name)
            << "</text>\n"
            << "<rect x=\"" << x0 << "\" y=\"" << y + 2 << "\" width=\"" << std::max(1.0, x1 - x0) << "\" height=\""
            << row_h - 4 << "\" fill=\"" << colour << "\"/>\n"
            << "<text x=\"" << x1 + 3 << "\" y=\"" << y + 11 << "\">" << format_fixed(ratio, 2)
            << (ratio > std::exp2(hi) ? " (off scale)" : "") << "</text>\n";
        if (target) {
            const double xt = x_of(*target);
            out << "<line x1=\"" << xt << "\" y1=\"" << y + 1 << "\" x2=\"" << xt << "\" y2=\"" << y + row_h - 1
                << "\" stroke=\"black\" stroke-dasharray=\"2,1\"/>\n";
        }
    }
    out << "</svg>\n";
}

}  // namespace distdl::bench::report
