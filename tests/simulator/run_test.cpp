// sim::run: rank threads, failure propagation and abort, traffic report, concurrent worlds,
// blocking without burning CPU, the time limit.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "simulator/run.hpp"

namespace {

using distdl::communicator;
using comm_ptr = std::shared_ptr<communicator>;
namespace sim = distdl::sim;

TEST(sim_run, rejects_rank_counts_below_one) {
    for (int n : {0, -3}) {
        try {
            sim::run(n, [](const comm_ptr&) {});
            FAIL() << "run(" << n << ") did not throw";
        } catch (const distdl::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("at least 1, got " + std::to_string(n)), std::string::npos) << e.what();
        }
    }
}

TEST(sim_run, every_rank_runs_once_with_its_rank_and_size) {
    for (int n : {1, 2, 5, 17}) {
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        std::vector<int> sizes(static_cast<std::size_t>(n), 0);
        sim::run(n, [&](const comm_ptr& world) {
            seen[static_cast<std::size_t>(world->rank())] += 1;
            sizes[static_cast<std::size_t>(world->rank())] = world->size();
        });
        for (int r = 0; r < n; ++r) {
            EXPECT_EQ(seen[static_cast<std::size_t>(r)], 1) << "rank " << r << " of " << n;
            EXPECT_EQ(sizes[static_cast<std::size_t>(r)], n);
        }
    }
}

TEST(sim_run, a_failing_rank_is_reported_with_its_rank_and_original_exception) {
    try {
        sim::run(4, [](const comm_ptr& world) {
            if (world->rank() == 2) throw std::runtime_error("boom");
            world->barrier();
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        EXPECT_EQ(e.rank(), 2);
        EXPECT_STREQ(e.what(), "rank 2: boom");
        EXPECT_THROW(std::rethrow_exception(e.original()), std::runtime_error);
    }
}

TEST(sim_run, a_non_standard_exception_is_reported_too) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            if (world->rank() == 1) throw 42;
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        EXPECT_EQ(e.rank(), 1);
        EXPECT_NE(std::string(e.what()).find("rank 1: "), std::string::npos);
        EXPECT_THROW(std::rethrow_exception(e.original()), int);
    }
}

TEST(sim_run, blocked_ranks_wake_with_aborted_and_the_original_failure_wins) {
    std::atomic<int> woke_aborted{0};
    try {
        sim::run(4, [&](const comm_ptr& world) {
            if (world->rank() == 0) {
                // Let the others block first.
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                throw std::logic_error("rank zero gives up");
            }
            double x = 0;
            std::vector<distdl::request> reqs;
            reqs.push_back(world->irecv(&x, 1, 0, 3));
            try {
                world->wait_all(reqs);
            } catch (const sim::aborted&) {
                ++woke_aborted;
                throw;
            }
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        EXPECT_EQ(e.rank(), 0);
        EXPECT_STREQ(e.what(), "rank 0: rank zero gives up");
    }
    EXPECT_EQ(woke_aborted.load(), 3);
}

TEST(sim_run, every_communication_after_an_abort_throws_aborted) {
    std::atomic<int> later_calls_aborted{0};
    EXPECT_THROW(sim::run(3,
                          [&](const comm_ptr& world) {
                              if (world->rank() == 0) throw std::runtime_error("first");
                              // Either blocks until the abort or enters after it: aborted both ways.
                              EXPECT_THROW(world->barrier(), sim::aborted);
                              int v = 1;
                              try {
                                  world->isend(&v, 1, 0, 0);
                              } catch (const sim::aborted& e) {
                                  EXPECT_NE(std::string(e.what()).find("rank 0 failed: first"), std::string::npos)
                                      << e.what();
                                  ++later_calls_aborted;
                              }
                              EXPECT_THROW(world->all_reduce_sum(1.0), sim::aborted);
                              EXPECT_THROW(world->create_sub({world->rank()}), sim::aborted);
                          }),
                 sim::rank_failure);
    EXPECT_EQ(later_calls_aborted.load(), 2);
}

TEST(sim_run, report_holds_each_ranks_traffic) {
    const auto report = sim::run(3, [](const comm_ptr& world) {
        const int me = world->rank();
        std::vector<distdl::request> reqs;
        double d[4] = {1, 2, 3, 4};
        if (me == 0) {
            distdl::traffic_scope scope(world->traffic(), "p2p");
            reqs.push_back(world->isend(d, 4, 1, 0));  // 1 message, 32 bytes
        }
        if (me == 1) reqs.push_back(world->irecv(d, 4, 0, 0));
        world->wait_all(reqs);
        float f[5] = {};
        world->broadcast(f, 5, 0);  // root: 2 messages, 40 bytes
        std::int64_t s[2] = {1, 2}, t[2];
        world->all_reduce_sum(s, t, 2, distdl::dtype::int64);  // each: 1 message, 16 bytes
        world->all_gather(std::int32_t{me});                    // each: 2 messages, 8 bytes
        world->barrier();                                       // nothing
        double r[3] = {}, out[3];
        world->reduce_sum(r, out, 3, distdl::dtype::float64, 1);  // non-roots: 1 message, 24 bytes
    });
    ASSERT_EQ(report.traffic.size(), 3u);
    EXPECT_EQ(report.traffic[0].total().messages, 7u);
    EXPECT_EQ(report.traffic[0].total().bytes, 120u);
    EXPECT_EQ(report.traffic[1].total().messages, 3u);
    EXPECT_EQ(report.traffic[1].total().bytes, 24u);
    EXPECT_EQ(report.traffic[2].total().messages, 4u);
    EXPECT_EQ(report.traffic[2].total().bytes, 48u);
    const auto& labels = report.traffic[0].by_label();
    ASSERT_EQ(labels.count("p2p"), 1u);
    EXPECT_EQ(labels.at("p2p").messages, 1u);
    EXPECT_EQ(labels.at("p2p").bytes, 32u);
    EXPECT_EQ(labels.at("unlabelled").messages, 6u);
}

// A small program that checks its own results (throws on a wrong one).
void ring_and_sum(const comm_ptr& world) {
    const int me = world->rank(), n = world->size();
    for (int round = 0; round < 20; ++round) {
        const double mine = me * 1000.0 + round;
        double from_left = -1;
        std::vector<distdl::request> reqs;
        reqs.push_back(world->isend(&mine, 1, (me + 1) % n, round));
        reqs.push_back(world->irecv(&from_left, 1, (me + n - 1) % n, round));
        world->wait_all(reqs);
        if (from_left != ((me + n - 1) % n) * 1000.0 + round) throw std::runtime_error("wrong ring value");
        if (world->all_reduce_sum(me) != n * (n - 1) / 2) throw std::runtime_error("wrong sum");
    }
}

TEST(sim_run, worlds_run_concurrently_without_sharing_state) {
    std::atomic<int> successes{0}, deadlocks{0}, other{0};
    auto good = [&] {
        for (int i = 0; i < 10; ++i) {
            try {
                sim::run(4, ring_and_sum);
                ++successes;
            } catch (...) {
                ++other;
            }
        }
    };
    auto mixed = [&] {
        for (int i = 0; i < 10; ++i) {
            try {
                sim::run(3, ring_and_sum);
                ++successes;
                // A world that deadlocks must not disturb the one running next to it.
                sim::run(2, [](const comm_ptr& world) {
                    if (world->rank() == 0) world->barrier();
                });
                ++other;
            } catch (const sim::deadlock&) {
                ++deadlocks;
            } catch (...) {
                ++other;
            }
        }
    };
    std::thread a(good), b(mixed);
    a.join();
    b.join();
    EXPECT_EQ(successes.load(), 20);
    EXPECT_EQ(deadlocks.load(), 10);
    EXPECT_EQ(other.load(), 0);
}

TEST(sim_run, waiting_ranks_block_instead_of_spinning) {
    const std::clock_t cpu_before = std::clock();
    const auto wall_before = std::chrono::steady_clock::now();
    sim::run(8, [](const comm_ptr& world) {
        int v = 0;
        std::vector<distdl::request> reqs;
        if (world->rank() == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
            for (int r = 1; r < world->size(); ++r) reqs.push_back(world->isend(&v, 1, r, 0));
        } else {
            reqs.push_back(world->irecv(&v, 1, 0, 0));
        }
        world->wait_all(reqs);
        world->barrier();
    });
    const double cpu = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
    EXPECT_GE(wall, 0.6);
    // Seven ranks spinning for 0.6 s would use at least a full core for that time.
    EXPECT_LT(cpu, 0.3) << "ranks used " << cpu << " s of CPU while waiting " << wall << " s";
}

}  // namespace

namespace {

// Three ranks past `options`' time limit: rank 0 busy outside the communicator until rank 1,
// blocked in a receive from it, is woken by the abort; rank 2 done. The what() of the
// sim::time_limit_exceeded that run throws ("" if none).
std::string time_limit_report(const sim::run_options& options) {
    std::atomic<bool> woken{false};
    try {
        sim::run(
            3,
            [&](const comm_ptr& world) {
                world->barrier();  // every rank has started
                double x = 0;
                if (world->rank() == 0) {
                    while (!woken) std::this_thread::sleep_for(std::chrono::milliseconds(2));
                } else if (world->rank() == 1) {
                    try {
                        std::vector<distdl::request> r;
                        r.push_back(world->irecv(&x, 1, 0, 4));
                        world->wait_all(r);
                    } catch (const sim::aborted&) {
                        woken = true;
                        throw;
                    }
                }
            },
            options);
    } catch (const sim::time_limit_exceeded& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// A rank busy or blocked outside the communicator is no deadlock the simulator can see: the time
// limit ends the run with what each rank was doing, and the ranks blocked in it wake.
TEST(sim_run, a_run_past_its_time_limit_says_what_each_rank_was_doing) {
    const std::string what = time_limit_report({.time_limit = 1});
    for (const char* part : {"sim::run: the time limit of 1 s has passed",
                             "rank 0 is not blocked in the communicator (computing, or blocked elsewhere",
                             "rank 1 waits in wait_all for a message from rank 0 with tag 4", "rank 2 has finished"})
        EXPECT_NE(what.find(part), std::string::npos) << "missing \"" << part << "\" in: " << what;
}

// DISTDL_SIM_TIME_LIMIT sets the limit of runs that give none; a value that is not a number of
// seconds is refused.
TEST(sim_run, the_environment_gives_runs_without_one_a_time_limit) {
    // The suite's own setting, if any, is back for the tests after this one.
    struct restore {
        const char* kept = std::getenv("DISTDL_SIM_TIME_LIMIT");
        std::string value = kept ? kept : "";
        ~restore() { kept ? ::setenv("DISTDL_SIM_TIME_LIMIT", value.c_str(), 1) : ::unsetenv("DISTDL_SIM_TIME_LIMIT"); }
    } restored;
    ASSERT_EQ(::setenv("DISTDL_SIM_TIME_LIMIT", "1.5", 1), 0);
    const std::string what = time_limit_report({});
    EXPECT_NE(what.find("the time limit of 1.5 s has passed"), std::string::npos) << what;
    for (const std::string refused : {"soon", " 5", "0x10", "inf", "-1"}) {
        ASSERT_EQ(::setenv("DISTDL_SIM_TIME_LIMIT", refused.c_str(), 1), 0);
        try {
            sim::run(1, [](const comm_ptr&) {});
            ADD_FAILURE() << "DISTDL_SIM_TIME_LIMIT=" << refused << " was not refused";
        } catch (const distdl::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("DISTDL_SIM_TIME_LIMIT must be a number of seconds in (0, 1000000], "
                                                 "or 0 for none, got \"" + refused + "\""),
                      std::string::npos)
                << e.what();
        }
    }
    ASSERT_EQ(::setenv("DISTDL_SIM_TIME_LIMIT", "0", 1), 0);  // none
    sim::run(1, [](const comm_ptr&) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
    EXPECT_THROW(sim::run(1, [](const comm_ptr&) {}, {.time_limit = -1}), distdl::invalid_argument);
}

// A rank that does not return even after the abort cannot be stopped: the process ends with the
// report instead of hanging in the join. After a failure elsewhere, the report gives the
// failure first (it is what the late rank keeps from view).
TEST(sim_run_death, a_rank_that_never_returns_ends_the_process_with_the_report) {
    const std::string style = GTEST_FLAG_GET(death_test_style);
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child runs threads
    EXPECT_DEATH(sim::run(
                     3,
                     [](const comm_ptr& world) {
                         if (world->rank() == 0) throw std::runtime_error("boom");
                         if (world->rank() == 1)
                             for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                     },
                     {.time_limit = 1}),
                 "the time limit of 1 s has passed after the world was aborted \\(rank 0 failed: [^\n]*boom\\): "
                 "rank 0 has failed; rank 1 is not blocked in the communicator[^\n]*; rank 2 has finished\n"
                 "sim::run: rank\\(s\\) \\[1\\] did not return within 1 s after that");
    GTEST_FLAG_SET(death_test_style, style);
}
