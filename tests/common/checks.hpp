#pragma once
// Checks written once and run on both transports: a check is a body that every rank of a
// world runs. tests/common/sim_main.cpp runs each registered check under the simulator for
// every world size it accepts (1..17); tests/common/mpi_main.cpp runs it under mpiexec on
// MPI_COMM_WORLD. A failed check throws check_failure, which aborts the world.
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/communicator.hpp"

namespace distdl::testing {

class check_failure : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using check_body = std::function<void(const std::shared_ptr<communicator>& world)>;

struct registered_check {
    std::string name;
    std::function<bool(int)> accepts_world_size;
    check_body body;
};

std::vector<registered_check>& check_registry();

struct check_registrar {
    check_registrar(std::string name, std::function<bool(int)> accepts, check_body body) {
        check_registry().push_back({std::move(name), std::move(accepts), std::move(body)});
    }
};

// Largest simulated world the runners try.
constexpr int max_sim_world = 17;

}  // namespace distdl::testing

#define DISTDL_CHECK_CONCAT2(a, b) a##b
#define DISTDL_CHECK_CONCAT(a, b) DISTDL_CHECK_CONCAT2(a, b)

// DISTDL_CHECK(name, condition on `world_size`) { body using `world` }
#define DISTDL_CHECK(name, accepts)                                                                     \
    static void DISTDL_CHECK_CONCAT(name, _body)(const std::shared_ptr<::distdl::communicator>& world); \
    static ::distdl::testing::check_registrar DISTDL_CHECK_CONCAT(name, _registrar)(                   \
        #name, [](int world_size) { (void)world_size; return (accepts); }, DISTDL_CHECK_CONCAT(name, _body)); \
    static void DISTDL_CHECK_CONCAT(name, _body)(const std::shared_ptr<::distdl::communicator>& world)

#define DCHECK_FAIL_(text)                                                                          \
    do {                                                                                            \
        std::ostringstream dcheck_msg_;                                                             \
        dcheck_msg_ << __FILE__ << ":" << __LINE__ << ": " << text;                                 \
        throw ::distdl::testing::check_failure(dcheck_msg_.str());                                  \
    } while (false)

#define DCHECK(cond)                                          \
    do {                                                      \
        if (!(cond)) DCHECK_FAIL_("check failed: " #cond);    \
    } while (false)

#define DCHECK_EQ(a, b)                                                                             \
    do {                                                                                            \
        const auto dcheck_a_ = (a);                                                                 \
        const auto dcheck_b_ = (b);                                                                 \
        if (!(dcheck_a_ == dcheck_b_))                                                              \
            DCHECK_FAIL_(#a " == " #b " failed: " << ::distdl::testing::show(dcheck_a_) << " vs "   \
                                                  << ::distdl::testing::show(dcheck_b_));           \
    } while (false)

// The statement must throw `type` with a message containing `text`.
#define DCHECK_THROWS(statement, type, text)                                                        \
    do {                                                                                            \
        bool dcheck_threw_ = false;                                                                 \
        try {                                                                                       \
            statement;                                                                              \
        } catch (const type& dcheck_e_) {                                                           \
            dcheck_threw_ = true;                                                                   \
            if (std::string(dcheck_e_.what()).find(text) == std::string::npos)                      \
                DCHECK_FAIL_(#statement " threw \"" << dcheck_e_.what() << "\", expected text \""   \
                                                    << text << "\"");                               \
        }                                                                                           \
        if (!dcheck_threw_) DCHECK_FAIL_(#statement " did not throw " #type);                      \
    } while (false)

namespace distdl::testing {

template <class T>
std::string show(const T& value) {
    std::ostringstream out;
    if constexpr (std::is_same_v<T, std::string> || std::is_arithmetic_v<T>) {
        out << value;
    } else {
        out << '[';
        bool first = true;
        for (const auto& v : value) {
            out << (first ? "" : ",") << show(v);
            first = false;
        }
        out << ']';
    }
    return out.str();
}

template <class A, class B>
std::string show(const std::pair<A, B>& p) {
    return "(" + show(p.first) + "," + show(p.second) + ")";
}

}  // namespace distdl::testing
