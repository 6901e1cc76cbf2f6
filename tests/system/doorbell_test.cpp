// Doorbell (an idle worker's or reconciler's WorkSignal), Doorbells and RingingStore on simulated
// time, and a worker and a reconciler that wait for the ring instead of polling.
#include "system/service/doorbell.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include "system/service/deadline.hpp"
#include "system/service/ringing_store.hpp"

#include "tests/support/broken_stores.hpp"
#include "tests/support/instants.hpp"
#include "tests/support/run_sync.hpp"
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

struct CountedRings final : WorkBell {
  int rings = 0;
  void ring() override { ++rings; }
};

BOOST_AUTO_TEST_SUITE(ringing_store)

// A write that may have left an attempt STARTING rings even when its reply is lost: it may have
// committed, and without the ring the attempt would wait for an idle worker's fallback poll. A
// write that cannot leave one (a claim's RUNNING, here) or that never ran rings nothing.
BOOST_AUTO_TEST_CASE(a_write_whose_reply_was_lost_rings_when_it_may_have_left_work) {
  MemoryStore memory;
  test::LosingStore lossy{memory};
  CountedRings bell;
  RingingStore ringing{lossy, bell};
  const auto lost = [&lossy](auto write) {
    lossy.lose_next_reply = true;
    BOOST_CHECK_THROW(test::run_sync(std::move(write)), StoreError);
  };
  lost(ringing.insert_job(NewJob{.owner_id = "alice",
                                 .idempotency_key = "k1",
                                 .request_fingerprint = "POST /jobs\n{}",
                                 .operation = "classify",
                                 .target_provider = "alpha",
                                 .failover = {},
                                 .input_json = R"({"text":"x"})",
                                 .payload_json = "{}"}));
  BOOST_TEST(bell.rings == 1);  // the job committed: its attempt waits STARTING
  const auto claimed = test::run_sync(memory.claim_next_attempt("w1", at(1), at(61)));
  BOOST_REQUIRE(claimed.has_value());
  // Moves the claimed attempt from `from` to `to` through the ringing store (its reply lost).
  const auto move = [&](AttemptState from, AttemptState to, Duration at) {
    const std::vector<AttemptState> states{from};
    lost(ringing.update_attempt({.attempt_id = claimed->id,
                                 .from = states,
                                 .to = to,
                                 .fence = {},
                                 .take_over_as = {},
                                 .reason = "moved",
                                 .at = Instant(at)}));
  };
  move(AttemptState::running, AttemptState::unknown, seconds(31));
  BOOST_TEST(bell.rings == 1);  // to UNKNOWN: nothing to claim
  move(AttemptState::unknown, AttemptState::starting, seconds(40));
  BOOST_TEST(bell.rings == 2);  // a re-drive leaves it STARTING
  lossy.down = true;
  lost(ringing.insert_attempt({.job_id = claimed->job_id,
                               .provider = "alpha",
                               .origin = AttemptOrigin::explicit_retry,
                               .created_at = at(50)}));
  BOOST_TEST(bell.rings == 2);  // never ran: nothing was written
}

BOOST_AUTO_TEST_SUITE_END()

// The whole system with a worker and a reconciler that wait for rings, each on its own bell:
// RingingStore rings after the writes that leave an attempt STARTING.
struct RungFixture : test::SystemFixture {
  Doorbell worker_bell{loop};
  Doorbell reconciler_bell{loop};
  Doorbells bells;
  RingingStore ringing{store, bells};
  SystemContext rung_context{ringing, providers, loop, loop, events, config, random, &worker_bell};
  SystemContext reconciler_context{ringing, providers, loop,   loop,
                                   events,  config,    random, &reconciler_bell};
  ApiHandler rung_api{rung_context};
  Worker worker{rung_context, "w1"};
  Reconciler reconciler{reconciler_context};

  RungFixture() {
    config.policy.worker_idle_poll = std::chrono::hours(1);
    bells.add(worker_bell);
    bells.add(reconciler_bell);
  }
  ~RungFixture() {
    worker.stop();
    reconciler.stop();
  }
  // Job 1's attempt claimed, without a ring, by a worker that then vanishes: its lease runs out
  // config.policy.lease from now, and only a reconciler's sweep can take it over.
  void claim_and_vanish() {
    BOOST_REQUIRE(
        run(store.claim_next_attempt("gone", loop.now(), loop.now() + config.policy.lease))
            .has_value());
  }
  // Whether a reconciler took job 1's attempt over (the takeover bumps its token).
  bool taken_over() { return attempts(1).at(0).lease_token > 1; }
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

BOOST_FIXTURE_TEST_SUITE(reconciler_wakeups, RungFixture)

BOOST_AUTO_TEST_CASE(a_reconciler_with_nothing_live_waits_for_a_ring_not_a_period) {
  start_reconciler(reconciler);
  loop.advance(seconds(60));                  // nothing live: waiting for a ring, at most an hour
  BOOST_REQUIRE(create("k1").status == 201);  // through the fixture's own, silent, context
  claim_and_vanish();
  loop.advance(seconds(600));  // the lease ran out long ago, and every period went by unswept
  BOOST_TEST(!taken_over());
  loop.advance(std::chrono::hours(1));
  BOOST_TEST(taken_over());  // the idle poll swept
}

BOOST_AUTO_TEST_CASE(a_ring_puts_the_reconciler_back_on_its_period_while_anything_is_live) {
  start_reconciler(reconciler);
  loop.advance(seconds(60));
  BOOST_REQUIRE(create_through_ringing("k1").status == 201);  // rings: a sweep sees it STARTING
  claim_and_vanish();
  // Live since the ring, so swept every period (5s): taken over within a period of the lease's
  // end, an hour before the idle poll.
  loop.advance(config.policy.lease + config.policy.reconcile_period + seconds(1));
  BOOST_TEST(taken_over());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
