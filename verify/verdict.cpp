#include "verify/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "verify/json_number.hpp"

namespace distdl::verify {

namespace {

constexpr double not_run = std::numeric_limits<double>::quiet_NaN();

double worst(double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    return std::max(a, b);
}

// A text in double quotes, its quotes, backslashes and control characters escaped as in JSON
// (a case file's text), so that a message stays one line and its quotes stay unambiguous.
std::string quoted(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

case_outcome::case_outcome() : forward_error(not_run), adjoint_error(not_run), dot_error(not_run) {}

const char* to_string(verdict v) {
    switch (v) {
        case verdict::passed: return "PASS";
        case verdict::failed: return "FAIL";
        case verdict::skipped: return "SKIP";
    }
    return "?";
}

case_outcome outcome_for(const case_spec& spec) {
    case_outcome out;
    out.name = spec.name;
    out.file = spec.file;
    out.layer = spec.layer;
    out.world_size = spec.world_size;
    out.dtype_name = to_string(spec.type);
    out.expects_error = !spec.expect_pass();
    return out;
}

case_outcome invalid_case(const std::string& file, const std::string& message) {
    case_outcome out;
    out.name = file;
    out.file = file;
    out.layer = "(invalid)";
    out.message = message;
    return out;
}

case_outcome judge(const case_spec& spec, std::vector<worker_result> results) {
    std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    case_outcome out = outcome_for(spec);
    out.result = verdict::passed;
    auto fail = [&](const std::string& message) {
        if (out.result == verdict::passed) {
            out.result = verdict::failed;
            out.message = message;
        }
    };
    if (results.size() != static_cast<std::size_t>(spec.world_size)) {
        fail("expected results from " + std::to_string(spec.world_size) + " workers, got " + std::to_string(results.size()));
        return out;
    }

    if (spec.expected_error) {
        const std::string& text = *spec.expected_error;
        for (const auto& r : results) {
            if (!r.problem.empty())
                fail("rank " + std::to_string(r.rank) + ": " + r.problem);
            else if (!r.refused)
                fail("rank " + std::to_string(r.rank) + " was not refused (expected an error containing " + quoted(text) +
                     ")");
            else if (r.refusal.find(text) == std::string::npos)
                fail("rank " + std::to_string(r.rank) + " refused with " + quoted(r.refusal) + ", which does not contain " +
                     quoted(text));
        }
        if (out.passed()) out.message = results.front().refusal;
        return out;
    }

    dot_terms total;
    bool every_rank_ran = true;  // a rank that threw has no share of the dot-product test
    for (const auto& r : results) {
        if (std::isnan(r.forward_error)) every_rank_ran = false;
        if (!r.problem.empty()) fail("rank " + std::to_string(r.rank) + ": " + r.problem);
        out.forward_error = worst(out.forward_error, r.forward_error);
        out.adjoint_error = worst(out.adjoint_error, r.adjoint_error);
        out.data_elements += r.data_elements;
        total += r.terms;  // rank order: the same sum on every transport
    }
    if (!every_rank_ran) {
        // Never a pass: without every rank's share the dot-product test was not done.
        if (out.passed()) fail("a rank did not complete the checks (no error text was given)");
        return out;
    }
    out.dot_error = adjoint_error(total);
    const double tolerance = adjoint_tolerance(spec.type);
    if (!(out.dot_error <= tolerance)) {
        std::ostringstream text;
        text << "adjoint dot-product test: |<Fx,y> - <x,F*y>| / scale = " << out.dot_error << " > " << tolerance
             << " (<Fx,y> = " << total.fx_y << ", <x,F*y> = " << total.x_fty << ")";
        fail(text.str());
    }
    // Layers with parameters: the test with respect to each one; dot_error is the worst.
    const auto& names = results.front().parameter_names;
    for (std::size_t k = 0; k < names.size(); ++k) {
        dot_terms param_total;
        for (const auto& r : results) {
            if (r.parameter_terms.size() != names.size()) {
                fail("rank " + std::to_string(r.rank) + " has no share of the dot-product test for parameter " + names[k]);
                return out;
            }
            param_total += r.parameter_terms[k];
        }
        const double error = adjoint_error(param_total);
        out.dot_error = worst(out.dot_error, error);
        if (!(error <= tolerance)) {
            std::ostringstream text;
            text << "adjoint dot-product test with respect to " << names[k] << ": relative error " << error << " > "
                 << tolerance << " (<Fp,y> = " << param_total.fx_y << ", <p,F*y> = " << param_total.x_fty << ")";
            fail(text.str());
        }
    }
    return out;
}

void to_json(nlohmann::json& out, const case_outcome& o) {
    out = nlohmann::json{{"name", o.name},
                         {"file", o.file},
                         {"layer", o.layer},
                         {"world_size", o.world_size},
                         {"dtype", o.dtype_name},
                         {"expects_error", o.expects_error},
                         {"verdict", to_string(o.result)},
                         {"message", o.message},
                         {"forward_error", std::isnan(o.forward_error) ? nlohmann::json() : number_to_json(o.forward_error)},
                         {"adjoint_error", std::isnan(o.adjoint_error) ? nlohmann::json() : number_to_json(o.adjoint_error)},
                         {"dot_error", std::isnan(o.dot_error) ? nlohmann::json() : number_to_json(o.dot_error)},
                         {"data_elements", o.data_elements},
                         {"seconds", o.seconds}};
}

void from_json(const nlohmann::json& in, case_outcome& o) {
    auto error_of = [](const nlohmann::json& v) { return v.is_null() ? not_run : number_from_json(v); };
    o.name = in.at("name").get<std::string>();
    o.file = in.at("file").get<std::string>();
    o.layer = in.at("layer").get<std::string>();
    o.world_size = in.at("world_size").get<int>();
    o.dtype_name = in.at("dtype").get<std::string>();
    o.expects_error = in.at("expects_error").get<bool>();
    const auto v = in.at("verdict").get<std::string>();
    o.result = v == "PASS" ? verdict::passed : v == "SKIP" ? verdict::skipped : verdict::failed;
    o.message = in.at("message").get<std::string>();
    o.forward_error = error_of(in.at("forward_error"));
    o.adjoint_error = error_of(in.at("adjoint_error"));
    o.dot_error = error_of(in.at("dot_error"));
    o.data_elements = in.at("data_elements").get<std::size_t>();
    o.seconds = in.at("seconds").get<double>();
}

}  // namespace distdl::verify
