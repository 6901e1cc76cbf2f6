// B2's refusals, where a history declares the status its target refuses a reused key with (a
// policy line's conflict_status; the probe writes its profile's): a reuse with another body sent
// after the key's first acknowledgement is refused with that status, not another (a 409 "still in
// flight" tells the client to send it again), and the same body again is never refused with it.
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/check/black_box.hpp"
#include "harness/check/black_box_jsonl.hpp"

#include "tests/harness/check/black_box_story.hpp"

namespace onejob::check::black_box {
namespace {

using nlohmann::json;
using testing::clauses;
using testing::clean;
using testing::joined;
using testing::only;
using testing::Story;

const json kAnother = {{"input", {{"text", "a third body"}}}};

// clean() with the target's conflict status declared.
History declared(const Story& story, int conflict_status = 422) {
  History history = story.history();
  history.conflict_status = conflict_status;
  return history;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(black_box_key_reuse)

BOOST_AUTO_TEST_CASE(a_reuse_refused_with_another_status_than_the_declared_one) {
  auto s = clean();  // r4 reuses k1 with another body and is refused 422
  s.create("r9", 200, "alice", "k1", kAnother).answer("r9", 210, 409);
  auto found = clauses(declared(s));
  BOOST_TEST(only(found, "B2.reuse_misanswered"), joined(found));
  // Undeclared, the status is not judged.
  found = clauses(s.history());
  BOOST_TEST(found.empty(), joined(found));
  // A target that refuses reuse with 409: then r4's 422 is the wrong word.
  found = clauses(declared(clean(), 409));
  BOOST_TEST(only(found, "B2.reuse_misanswered"), joined(found));
  BOOST_TEST(clauses(declared(clean())).empty());
}

BOOST_AUTO_TEST_CASE(refusals_that_say_something_else_first_are_not_misanswers) {
  // Malformed, unauthenticated, forbidden, too large, rate-limited, unavailable, no answer.
  for (const int status : {400, 401, 403, 413, 429, 503}) {
    auto s = clean();
    s.create("r9", 200, "alice", "k1", kAnother).answer("r9", 210, status);
    const auto found = clauses(declared(s));
    BOOST_TEST(found.empty(), status << ": " << joined(found));
  }
  auto lost = clean();
  lost.create("r9", 200, "alice", "k1", kAnother).lost("r9", 210);
  BOOST_TEST(clauses(declared(lost)).empty());
}

BOOST_AUTO_TEST_CASE(a_reuse_sent_before_the_first_acknowledgement_arrived_is_not_judged) {
  // The target may have taken r2's body first: the key's payload is not known yet.
  Story s;
  s.create("r1", 0, "alice", "k1")
      .create("r2", 5, "alice", "k1", kAnother)
      .answer("r1", 10, 201, "7", "queued")
      .answer("r2", 15, 409);
  auto found = clauses(declared(s));
  BOOST_TEST(found.empty(), joined(found));
  // Sent after it, the same answer is a misanswer.
  s.create("r3", 20, "alice", "k1", kAnother).answer("r3", 25, 409);
  found = clauses(declared(s));
  BOOST_TEST(only(found, "B2.reuse_misanswered"), joined(found));
}

BOOST_AUTO_TEST_CASE(the_same_body_again_refused_as_a_reused_key) {
  auto s = clean();
  s.create("r9", 200, "alice", "k1").answer("r9", 210, 422);
  auto found = clauses(declared(s));
  BOOST_TEST(only(found, "B2.replay_refused"), joined(found));
  // Key order and spacing are not another body.
  auto spaced = clean();
  spaced
      .create("r9", 200, "alice", "k1",
              json::parse(R"({"input":{"text":"please refund me"},"provider":"alpha",
                              "operation":"classify"})"))
      .answer("r9", 210, 422);
  found = clauses(declared(spaced));
  BOOST_TEST(only(found, "B2.replay_refused"), joined(found));
  // Another status (409, still in flight) or none declared: not this clause.
  auto busy = clean();
  busy.create("r9", 200, "alice", "k1").answer("r9", 210, 409);
  BOOST_TEST(clauses(declared(busy)).empty());
  BOOST_TEST(clauses(s.history()).empty());
}

BOOST_AUTO_TEST_CASE(a_policy_line_declares_the_conflict_status) {
  std::istringstream both(policy_jsonl(3, 422) + "\n");
  const History read = read_jsonl(both, "h");
  BOOST_TEST((read.attempt_limit == std::optional<int>(3)));
  BOOST_TEST((read.conflict_status == std::optional<int>(422)));
  std::istringstream alone(policy_jsonl(std::nullopt, 409) + "\n");
  const History status_only = read_jsonl(alone, "h");
  BOOST_TEST(!status_only.attempt_limit.has_value());
  BOOST_TEST((status_only.conflict_status == std::optional<int>(409)));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"kind":"policy","t_us":0,"conflict_status":200})",
       "h:1: field \"conflict_status\": expected a 4xx HTTP status"},
      {R"({"kind":"policy","t_us":0,"conflict_status":"422"})",
       "h:1: field \"conflict_status\": expected a 4xx HTTP status"},
      {R"({"kind":"policy","t_us":0})",
       "h:1: field \"kind\": a policy line declares attempt_limit, conflict_status or "
       "created_location (one or more)"},
  };
  for (const auto& [text, expected] : bad) {
    std::istringstream in(text + "\n");
    try {
      read_jsonl(in, "h");
      BOOST_ERROR("accepted: " << text);
    } catch (const HistoryError& error) {
      BOOST_TEST(std::string(error.what()).starts_with(expected), error.what());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace onejob::check::black_box
