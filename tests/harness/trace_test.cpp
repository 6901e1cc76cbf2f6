#include "harness/sim/trace.hpp"

#include <boost/test/unit_test.hpp>

#include "system/events/api_events.hpp"

#include "harness/sim/rng.hpp"

#include "tests/support/recording_sink.hpp"

namespace onejob::sim {
namespace {

BOOST_AUTO_TEST_SUITE(trace)

BOOST_AUTO_TEST_CASE(events_are_stamped_with_seq_time_and_node) {
  test::ManualClock clock;
  Trace trace(clock);
  NodeEventSink api(trace, "api-1");
  api.emit(events::to_event(events::JobCreated{.job_id = 7, .owner = "alice", .key = "k"}));
  clock.advance(std::chrono::milliseconds(3));
  trace.record("net", Event("test.fault").with("ok", false), /*injected=*/true);
  BOOST_REQUIRE(trace.events().size() == 2u);
  BOOST_TEST(trace.events()[1].seq == 2u);
  BOOST_TEST(trace.to_jsonl() ==
             "{\"seq\":1,\"t_us\":0,\"node\":\"api-1\",\"kind\":\"job.created\","
             "\"data\":{\"job_id\":7,\"owner\":\"alice\",\"key\":\"k\"}}\n"
             "{\"seq\":2,\"t_us\":3000,\"node\":\"net\",\"kind\":\"test.fault\",\"injected\":true,"
             "\"data\":{\"ok\":false}}\n");
}

BOOST_AUTO_TEST_CASE(the_hash_is_fnv1a_of_the_jsonl_and_changes_with_any_byte) {
  test::ManualClock clock;
  Trace a(clock);
  Trace b(clock);
  a.record("n", Event("k").with("v", 1));
  b.record("n", Event("k").with("v", 2));
  BOOST_TEST(a.hash() == hex64(fnv1a64(a.to_jsonl())));
  BOOST_TEST(a.hash().size() == 16u);
  BOOST_TEST(a.hash() != b.hash());
}

BOOST_AUTO_TEST_CASE(bytes_that_are_not_utf8_cannot_break_a_trace) {
  test::ManualClock clock;
  Trace trace(clock);
  trace.record("n", Event("k").with("blob", std::string("\xff\xfe")));
  BOOST_TEST(trace.to_jsonl().find("\"blob\":") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::sim
