#include "harness/sim/sim_loop.hpp"

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs it

#include <set>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/test/unit_test.hpp>

#include "system/domain/check.hpp"

namespace onejob::sim {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

std::string tie_order(std::uint64_t seed) {
  SimLoop loop{Rng(seed)};
  std::string order;
  for (char name : std::string("abcdefgh")) {
    loop.schedule_at(Instant(milliseconds(5)), [&order, name] { order += name; });
  }
  loop.run();
  return order;
}

Async<void> sleeper(SimLoop* loop, std::vector<std::int64_t>* woke_at_ms) {
  co_await loop->sleep_for(milliseconds(250));
  woke_at_ms->push_back(
      std::chrono::duration_cast<milliseconds>(loop->now().time_since_epoch()).count());
  co_await loop->sleep_for(hours(1));
  woke_at_ms->push_back(
      std::chrono::duration_cast<milliseconds>(loop->now().time_since_epoch()).count());
}

BOOST_AUTO_TEST_SUITE(sim_loop)

BOOST_AUTO_TEST_CASE(runs_in_instant_order_and_jumps_the_clock) {
  SimLoop loop{Rng(1)};
  std::vector<std::pair<char, std::int64_t>> ran;
  auto note = [&](char name) {
    return [&ran, &loop, name] { ran.emplace_back(name, loop.now().time_since_epoch().count()); };
  };
  loop.schedule_at(Instant(milliseconds(30)), note('c'));
  loop.schedule_at(Instant(milliseconds(10)), note('a'));
  loop.schedule_at(Instant(milliseconds(20)), note('b'));
  BOOST_TEST(loop.run() == 3u);
  BOOST_REQUIRE(ran.size() == 3u);
  BOOST_TEST(ran[0].first == 'a');
  BOOST_TEST(ran[0].second == 10'000);
  BOOST_TEST(ran[1].first == 'b');
  BOOST_TEST(ran[2].first == 'c');
  BOOST_TEST(ran[2].second == 30'000);
}

BOOST_AUTO_TEST_CASE(handlers_may_schedule_more_work_including_at_the_same_instant) {
  SimLoop loop{Rng(1)};
  std::string order;
  loop.schedule_at(Instant(milliseconds(1)), [&] {
    order += '1';
    loop.schedule_after(Duration(0), [&] { order += '2'; });
    loop.schedule_after(milliseconds(1), [&] { order += '3'; });
  });
  loop.run();
  BOOST_TEST(order == "123");
  BOOST_TEST((loop.now() == Instant(milliseconds(2))));
}

BOOST_AUTO_TEST_CASE(ties_at_one_instant_are_ordered_by_the_seed) {
  BOOST_TEST(tie_order(3) == tie_order(3));
  std::set<std::string> orders;
  for (std::uint64_t seed = 0; seed < 20; ++seed) orders.insert(tie_order(seed));
  BOOST_TEST(orders.size() > 10u);
}

BOOST_AUTO_TEST_CASE(coroutines_sleep_in_simulated_time_only) {
  SimLoop loop{Rng(1)};
  std::vector<std::int64_t> woke_at_ms;
  boost::asio::co_spawn(loop.io(), sleeper(&loop, &woke_at_ms), boost::asio::detached);
  loop.run();
  BOOST_TEST(woke_at_ms == (std::vector<std::int64_t>{250, 3'600'250}));
}

// What is posted to the io_context (before the run, by a posted handler, by a queued one) runs
// before the clock moves on, in the order posted. The loop looks at the io_context's ready queue
// instead of polling it after every event: this is what that must not lose.
BOOST_AUTO_TEST_CASE(posted_work_runs_before_the_next_queued_instant) {
  SimLoop loop{Rng(1)};
  std::string order;
  boost::asio::post(loop.io(), [&] {
    order += 'a';
    boost::asio::post(loop.io(), [&] { order += 'b'; });
  });
  loop.schedule_at(Instant(milliseconds(1)), [&] {
    order += 'c';
    boost::asio::post(loop.io(), [&] { order += 'd'; });
    boost::asio::post(loop.io(), [&] { order += 'e'; });
  });
  loop.schedule_at(Instant(milliseconds(2)), [&] { order += 'f'; });
  loop.run();
  BOOST_TEST(order == "abcdef");
  BOOST_TEST(loop.handled() == 6u);
}

// The same when the loop is run from inside a handler of its own io_context: what a queued
// handler posts then waits in the outer run's queue.
BOOST_AUTO_TEST_CASE(posted_work_runs_in_order_when_the_loop_runs_inside_the_io_context) {
  SimLoop loop{Rng(1)};
  std::string order;
  boost::asio::post(loop.io(), [&] {
    loop.schedule_at(Instant(milliseconds(1)), [&] {
      order += 'x';
      boost::asio::post(loop.io(), [&] { order += 'y'; });
    });
    loop.schedule_at(Instant(milliseconds(2)), [&] { order += 'z'; });
    loop.run(Instant(milliseconds(5)));
    order += '.';
  });
  loop.run();
  BOOST_TEST(order == "xyz.");
}

BOOST_AUTO_TEST_CASE(run_until_stops_before_later_work_and_resumes) {
  SimLoop loop{Rng(1)};
  int ran = 0;
  loop.schedule_at(Instant(milliseconds(5)), [&] { ++ran; });
  loop.schedule_at(Instant(milliseconds(50)), [&] { ++ran; });
  loop.run(Instant(milliseconds(10)));
  BOOST_TEST(ran == 1);
  BOOST_TEST(loop.pending() == 1u);
  loop.run();
  BOOST_TEST(ran == 2);
}

// A timetable of `count` entries over a few instants; each, when run, logs itself and queues a
// follow-up at an instant of its own, so that work queued while running lands among it.
void queue_timetable(SimLoop& loop, std::string& log, int count) {
  for (int i = 0; i < count; ++i) {
    loop.schedule_at(Instant(milliseconds((i * 7) % 13)), [&loop, &log, i] {
      log += std::to_string(i) + "@" + std::to_string(loop.now().time_since_epoch().count()) + " ";
      loop.schedule_after(milliseconds(i % 3), [&loop, &log, i] {
        log += "f" + std::to_string(i) + "@" +
               std::to_string(loop.now().time_since_epoch().count()) + " ";
      });
    });
  }
}

BOOST_AUTO_TEST_CASE(work_queued_before_the_first_run_interleaves_as_if_queued_during_it) {
  // The same timetable, queued before the loop runs (kept aside, sorted once) and queued from a
  // handler while it runs (into the heap): with one seed, the same draws and the same order.
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    std::string before;
    {
      SimLoop loop{Rng(seed)};
      loop.schedule_at(Instant(milliseconds(0)), [] {});  // draws as the other's first handler
      queue_timetable(loop, before, 200);
      BOOST_TEST(loop.pending() == 201u);
      BOOST_TEST((loop.next_instant() == Instant(milliseconds(0))));
      loop.run(Instant(milliseconds(5)));
      loop.run();
    }
    std::string during;
    {
      SimLoop loop{Rng(seed)};
      loop.schedule_at(Instant(milliseconds(0)), [&] { queue_timetable(loop, during, 200); });
      loop.run(Instant(milliseconds(5)));
      loop.run();
    }
    BOOST_TEST(before.size() > 2000u);
    BOOST_TEST(before == during);
  }
}

BOOST_AUTO_TEST_CASE(scheduling_in_the_past_is_a_programming_error) {
  SimLoop loop{Rng(1)};
  loop.schedule_at(Instant(milliseconds(5)), [] {});
  loop.run();
  BOOST_CHECK_THROW(loop.schedule_at(Instant(milliseconds(1)), [] {}), AssertionFailure);
}

BOOST_AUTO_TEST_CASE(an_exception_in_a_handler_leaves_run) {
  SimLoop loop{Rng(1)};
  loop.schedule_at(Instant(milliseconds(1)), [] { throw std::runtime_error("boom"); });
  BOOST_CHECK_THROW(loop.run(), std::runtime_error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::sim
