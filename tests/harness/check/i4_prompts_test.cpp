#include <chrono>
#include <optional>
#include <string>

#include <boost/test/unit_test.hpp>

#include "harness/check/invariant.hpp"
#include "harness/sim/rng.hpp"
#include "harness/sim/trace.hpp"

#include "tests/support/histories.hpp"

namespace onejob::check {
namespace {

using namespace onejob::test;
using namespace std::chrono_literals;

// alpha's and beta's templates; job 1's stored input is {"text":"please refund me"}.
constexpr const char* kAlphaTemplate = "Q {{operation}}: {{input}}";
constexpr const char* kBetaTemplate = "{{input}} -> {{operation}}?";
constexpr const char* kAlphaPrompt = R"(Q classify: {"text":"please refund me"})";
constexpr const char* kBetaPrompt = R"({"text":"please refund me"} -> classify?)";

// What a call carried, as its provider records it.
struct Carried {
  std::string prompt;
  std::string temperature = "0";
};

void providers(HistoryBuilder& h) {
  for (const auto& [name, text] : {std::pair{"alpha", kAlphaTemplate}, {"beta", kBetaTemplate}}) {
    h.add("world", events::RunProvider{.name = name,
                                       .prompt_template = text,
                                       .max_prompt_tokens = 4096,
                                       .bytes_per_token = 4});
  }
}

events::ProviderExecuted carrying(events::ProviderExecuted executed, const Carried& carried) {
  executed.temperature = carried.temperature;
  executed.prompt_bytes = static_cast<std::int64_t>(carried.prompt.size());
  executed.prompt_fnv = sim::hex64(sim::fnv1a64(carried.prompt));
  return executed;
}

// Job 1's attempt 1 (at alpha) is executed by `provider` carrying `carried`; returns the
// execution's seq.
std::uint64_t attempt_call(HistoryBuilder& h, const Carried& carried,
                           const std::string& provider = "alpha") {
  providers(h);
  insert_job(h, {});
  h.at(1s).add(kStore, claimed(1, 1)).add("worker-1", provider_called(1, 1));
  return h.add(provider, carrying(executed(1, 1, "ok", kBilling, Instant(2s)), carried)).last_seq();
}

// alpha executes certification call cert:1 for classify with {"text":"x"}, carrying `carried`.
std::uint64_t certification_call_carrying(HistoryBuilder& h, const Carried& carried) {
  providers(h);
  auto call = carrying(certification_call("ok", Instant(1s)), carried);
  call.input = R"({"text":"x"})";
  return h.add("alpha", call).last_seq();
}

BOOST_AUTO_TEST_SUITE(i4_prompts)

BOOST_AUTO_TEST_CASE(an_attempt_sent_its_providers_rendered_prompt_at_zero_passes) {
  HistoryBuilder h;
  attempt_call(h, {kAlphaPrompt});
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_CASE(an_attempt_sent_another_prompt_is_a_violation) {
  // Another template's prompt, the same length with one byte changed, one byte short.
  const std::string same_length = std::string(kAlphaPrompt).replace(0, 1, "q");
  const std::string short_one = std::string(kAlphaPrompt).substr(1);
  for (const std::string& prompt : {std::string(kBetaPrompt), same_length, short_one}) {
    HistoryBuilder h;
    const auto seq = attempt_call(h, {prompt});
    require_one(check_timeout_is_unknown(h.model()), "I4.prompt_misrendered", seq);
  }
}

BOOST_AUTO_TEST_CASE(a_call_at_a_temperature_above_zero_is_a_violation) {
  HistoryBuilder h;
  const auto seq = attempt_call(h, {kAlphaPrompt, "0.2"});
  require_one(check_timeout_is_unknown(h.model()), "I4.temperature_not_zero", seq);
  HistoryBuilder certifying;
  const auto call = certification_call_carrying(certifying, {R"(Q classify: {"text":"x"})", "1"});
  require_one(check_timeout_is_unknown(certifying.model()), "I4.temperature_not_zero", call);
}

BOOST_AUTO_TEST_CASE(the_executing_provider_renders_with_its_own_template) {
  // Executed at beta (I9 judges where): beta's template is the one its prompt must follow.
  HistoryBuilder h;
  attempt_call(h, {kBetaPrompt}, "beta");
  require_none(check_timeout_is_unknown(h.model()));
  HistoryBuilder wrong;
  const auto seq = attempt_call(wrong, {kAlphaPrompt}, "beta");
  require_one(check_timeout_is_unknown(wrong.model()), "I4.prompt_misrendered", seq);
}

BOOST_AUTO_TEST_CASE(a_certification_call_renders_the_input_it_carried) {
  HistoryBuilder h;
  certification_call_carrying(h, {R"(Q classify: {"text":"x"})"});
  require_none(check_timeout_is_unknown(h.model()));
  HistoryBuilder wrong;
  const auto seq = certification_call_carrying(wrong, {R"({"text":"x"} -> classify?)"});
  require_one(check_timeout_is_unknown(wrong.model()), "I4.prompt_misrendered", seq);
}

BOOST_AUTO_TEST_CASE(a_call_that_recorded_nothing_it_carried_is_not_judged) {
  HistoryBuilder h;
  providers(h);
  insert_job(h, {});
  h.at(1s).add(kStore, claimed(1, 1)).add("worker-1", provider_called(1, 1));
  h.add("alpha", executed(1, 1, "ok", kBilling, Instant(2s)));
  require_none(check_timeout_is_unknown(h.model()));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::check
