#include "system/service/certifier.hpp"

#include <boost/test/unit_test.hpp>

#include "tests/support/system_fixture.hpp"

namespace onejob {
namespace {

using test::Scripted;

struct CertifierFixture : test::SystemFixture {
  Certification certify_beta() {
    Certifier certifier(context);
    return run(certifier.certify(*config.find_provider("beta")));
  }
  static std::string all(const Certification& c) {
    std::string joined;
    for (const auto& reason : c.reasons) joined += reason + "\n";
    return joined;
  }
};

BOOST_FIXTURE_TEST_SUITE(certifier, CertifierFixture)

BOOST_AUTO_TEST_CASE(a_provider_honouring_the_contract_passes_and_is_recorded) {
  auto result = certify_beta();
  BOOST_TEST(result.passed, all(result));
  BOOST_TEST(run(store.latest_certification("beta"))->passed);
  // A full round trip for every operation, at temperature 0, through beta's own template.
  BOOST_TEST(providers.calls_to("beta") == 4u);
  for (const auto& call : providers.calls()) {
    BOOST_TEST(call.temperature == 0.0);
    BOOST_TEST(call.prompt.find(call.input_json) != std::string::npos);
  }
  const auto recorded = test::typed<events::CertificationRecorded>(events.events);
  BOOST_REQUIRE(recorded.size() == 1u);
  BOOST_TEST(recorded[0].passed);
}

BOOST_AUTO_TEST_CASE(a_hallucinated_key_fails_certification_with_the_reason) {
  providers.set_default("beta",
                        Scripted::answer(R"({"label":"billing","confidence":1,"extra":1})"));
  auto result = certify_beta();
  BOOST_TEST(!result.passed);
  BOOST_TEST(all(result).find(R"(case 1 (classify): unexpected top-level key "extra")") !=
             std::string::npos);
  BOOST_TEST(!run(store.latest_certification("beta"))->passed);
}

BOOST_AUTO_TEST_CASE(prose_fails_certification) {
  providers.set_default("beta", Scripted::answer("I think this is about billing."));
  auto result = certify_beta();
  BOOST_TEST(result.reasons.size() == 4u);
  BOOST_TEST(all(result).find("output is not JSON") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(valid_json_with_the_wrong_meaning_fails_certification) {
  // Well-formed classify answers, but always "other": the operation was not really done.
  providers.script("beta", Scripted::answer(R"({"label":"other","confidence":0.9})"));
  providers.script("beta", Scripted::answer(R"({"label":"other","confidence":0.9})"));
  auto result = certify_beta();
  BOOST_TEST(!result.passed);
  BOOST_TEST(all(result).find(R"(case 1 (classify): expected label "billing", got "other")") !=
             std::string::npos);
  BOOST_TEST(all(result).find(R"(case 2 (classify): expected label "support", got "other")") !=
             std::string::npos);
  BOOST_TEST(result.reasons.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_providers_limit_fails_without_calling_it) {
  config.providers[1].max_prompt_tokens = 10;  // beta
  auto result = certify_beta();
  BOOST_TEST(!result.passed);
  BOOST_TEST(result.reasons.size() == 4u);
  BOOST_TEST(all(result).find("over beta's limit of 10") != std::string::npos);
  BOOST_TEST(providers.calls_to("beta") == 0u);
}

BOOST_AUTO_TEST_CASE(a_provider_that_never_answers_fails_at_the_deadline) {
  providers.set_default("beta", Scripted::hang());
  auto result = certify_beta();
  BOOST_TEST(!result.passed);
  BOOST_TEST(all(result).find("no answer within the deadline") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
