// Doorbell (an idle worker's WorkSignal), Doorbells and RingingStore on simulated time, and a
// worker that waits for the ring instead of polling.
#include "system/service/doorbell.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include "system/service/deadline.hpp"
#include "system/service/ringing_store.hpp"

#include "tests/support/instants.hpp"
#include "tests/support/system_fixture.hpp"

namespace onejob {
namespace {

using std::chrono::seconds;

// The instants at which each wait of `bell` ended.
struct Waits {
  sim::SimLoop loop{sim::Rng{7}};
  Doorbell bell{loop};
  std::vector<Instant> ended;

  // Starts one wait of `at_most`, recording when it ends.
  void wait(Duration at_most) {
    boost::asio::co_spawn(loop.io(), record(at_most), rethrow_error);
    loop.run(loop.now());  // the wait begins now
  }
  Async<void> record(Duration at_most) {
    co_await bell.wait(at_most);
    ended.push_back(loop.now());
  }
  void ring_at(Duration at) {
    loop.schedule_at(Instant(at), [this] { bell.ring(); });
  }
};

using test::at;

BOOST_AUTO_TEST_SUITE(doorbell)

BOOST_AUTO_TEST_CASE(a_ring_ends_the_wait_before_its_timeout) {
  Waits waits;
  waits.wait(seconds(10));
  waits.ring_at(seconds(3));
  waits.loop.run();
  BOOST_TEST(waits.ended == std::vector<Instant>{at(3)});
}

BOOST_AUTO_TEST_CASE(without_a_ring_the_wait_ends_at_its_timeout) {
  Waits waits;
  waits.wait(seconds(10));
  waits.loop.run();
  BOOST_TEST(waits.ended == std::vector<Instant>{at(10)});
}

BOOST_AUTO_TEST_CASE(a_ring_between_waits_ends_the_next_one_at_once_and_only_that_one) {
  Waits waits;
  waits.ring_at(seconds(1));
  waits.ring_at(seconds(1));  // two rings before a wait count as one
  waits.loop.run();
  waits.wait(seconds(10));
  waits.loop.run();
  waits.wait(seconds(10));
  waits.loop.run();
  BOOST_TEST(waits.ended == (std::vector<Instant>{at(1), at(11)}));
}

BOOST_AUTO_TEST_CASE(the_timeout_of_a_rung_wait_never_ends_a_later_wait) {
  Waits waits;
  waits.wait(seconds(5));
  waits.ring_at(seconds(1));
  waits.loop.run(at(1));
  waits.wait(seconds(10));  // at 1s: the first wait's timeout (5s) must not end it
  waits.loop.run();
  BOOST_TEST(waits.ended == (std::vector<Instant>{at(1), at(11)}));
}

BOOST_AUTO_TEST_CASE(doorbells_ring_every_bell_added_and_none_removed) {
  sim::SimLoop loop{sim::Rng{7}};
  Doorbell a{loop};
  Doorbell b{loop};
  Doorbells all;
  all.add(a);
  all.add(b);
  all.remove(b);
  all.ring();
  std::vector<std::string> ended;
  auto wait = [&](Doorbell& bell, std::string name) -> Async<void> {
    co_await bell.wait(seconds(10));
    if (loop.now() == Instant{}) ended.push_back(name);
  };
  boost::asio::co_spawn(loop.io(), wait(a, "a"), rethrow_error);
  boost::asio::co_spawn(loop.io(), wait(b, "b"), rethrow_error);
  loop.run();
  BOOST_TEST(ended == std::vector<std::string>{"a"});
}

BOOST_AUTO_TEST_SUITE_END()

// The whole system with a worker that waits for rings: RingingStore rings after the writes
// that leave an attempt STARTING.
struct RungFixture : test::SystemFixture {
  Doorbell bell{loop};
  Doorbells bells;
  RingingStore ringing{store, bells};
  SystemContext rung_context{ringing, providers, loop, loop, events, config, random, &bell};
  ApiHandler rung_api{rung_context};
  Worker worker{rung_context, "w1"};

  RungFixture() {
    config.policy.worker_idle_poll = std::chrono::hours(1);
    bells.add(bell);
  }
  ~RungFixture() { worker.stop(); }
  Response create_through_ringing(const std::string& key) {
    Response response;
    run([&]() -> Async<void> {
      response = co_await rung_api.handle(test::make_request(
          "POST", "/jobs",
          R"({"operation":"classify","provider":"alpha","input":{"text":"charged twice"}})",
          "alice", key));
    }());
    return response;
  }
};

BOOST_FIXTURE_TEST_SUITE(worker_wakeups, RungFixture)

BOOST_AUTO_TEST_CASE(an_idle_worker_claims_a_new_job_when_rung_not_at_its_idle_poll) {
  start_worker(worker);
  loop.advance(seconds(60));  // idle: waiting for a ring, at most an hour
  BOOST_REQUIRE(create_through_ringing("k1").status == 201);
  loop.advance(seconds(1));
  const auto rows = attempts(1);
  BOOST_REQUIRE(rows.size() == 1u);
  BOOST_TEST((rows[0].state != AttemptState::starting));  // claimed within the second
}

BOOST_AUTO_TEST_CASE(a_job_written_without_a_ring_waits_for_the_idle_poll) {
  start_worker(worker);
  loop.advance(seconds(60));
  BOOST_REQUIRE(create("k1").status == 201);  // through the fixture's own, silent, context
  loop.advance(seconds(600));
  BOOST_TEST((attempts(1)[0].state == AttemptState::starting));  // nobody rang
  loop.advance(std::chrono::hours(1));
  BOOST_TEST((attempts(1)[0].state != AttemptState::starting));  // the idle poll found it
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
