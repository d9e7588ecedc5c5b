#pragma once
// A simulated world driven by a Google Benchmark loop: the world runs on a helper thread for
// the whole benchmark; each iteration of the loop releases one step on every worker and waits
// for it to finish (the workers block in between, so the process CPU time is the workers' work).
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/communicator.hpp"
#include "simulator/run.hpp"

namespace distdl::bench {

using step_fn = std::function<void()>;

// worker(world) runs once on every worker: it builds what the worker needs and returns its step.
// The step runs once before measuring (warm-up: plans and buffers reach their steady state),
// then once per iteration. Returns the number of measured steps.
inline long run_stepped_world(benchmark::State& state, int world_size,
                              const std::function<step_fn(const std::shared_ptr<communicator>&)>& worker) {
    std::mutex m;
    std::condition_variable cv;
    long requested = 0, completed = 0;
    bool ready = false, stop = false;
    std::thread world_thread([&] {
        sim::run(world_size, [&](const std::shared_ptr<communicator>& world) {
            const step_fn step = worker(world);
            step();
            long done = 0;
            for (;;) {
                int go = 0;
                if (world->rank() == 0) {
                    std::unique_lock<std::mutex> lock(m);
                    if (!ready) {
                        ready = true;
                        cv.notify_all();
                    }
                    cv.wait(lock, [&] { return stop || requested > done; });
                    go = stop ? 0 : 1;
                }
                world->broadcast(&go, 1, 0);
                if (!go) break;
                step();
                world->barrier();
                if (world->rank() == 0) {
                    std::lock_guard<std::mutex> lock(m);
                    completed = ++done;
                    cv.notify_all();
                }
            }
        });
    });
    {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return ready; });
    }
    for (auto _ : state) {
        std::unique_lock<std::mutex> lock(m);
        ++requested;
        cv.notify_all();
        cv.wait(lock, [&] { return completed == requested; });
    }
    {
        std::lock_guard<std::mutex> lock(m);
        stop = true;
        cv.notify_all();
    }
    world_thread.join();
    return requested;
}

}  // namespace distdl::bench
