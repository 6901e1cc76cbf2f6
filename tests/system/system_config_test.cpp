// SystemConfig::validate: the one gate a serve config and a scenario's policy pass before any
// component is built. Each limit is tried at its boundary, on both sides, from a valid config.
#include <utility>

#include <functional>
#include <stdexcept>
#include <string>

#include <boost/test/unit_test.hpp>

#include "system/service/system_context.hpp"

namespace onejob {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

ProviderProfile provider(std::string name) {
  ProviderProfile profile;
  profile.name = std::move(name);
  return profile;
}

SystemConfig valid_config() {
  SystemConfig config;
  config.policy.attempt_deadline = seconds(10);
  config.policy.lease = seconds(20);
  config.providers.push_back(provider("alpha"));
  config.providers.push_back(provider("beta"));
  return config;
}

// The message validate() refuses `change`d config with, or "" when it accepts it.
std::string refusal(const std::function<void(SystemConfig&)>& change) {
  SystemConfig config = valid_config();
  change(config);
  try {
    config.validate();
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

BOOST_AUTO_TEST_SUITE(system_config)

BOOST_AUTO_TEST_CASE(the_valid_config_and_the_defaults_pass) {
  BOOST_TEST(refusal([](SystemConfig&) {}) == "");
  BOOST_CHECK_NO_THROW(SystemConfig{}.validate());
}

BOOST_AUTO_TEST_CASE(the_attempt_deadline_must_be_positive) {
  BOOST_TEST(refusal([](SystemConfig& c) { c.policy.attempt_deadline = microseconds(0); }) ==
             "attempt deadline must be positive");
  BOOST_TEST(refusal([](SystemConfig& c) { c.policy.attempt_deadline = microseconds(-1); }) ==
             "attempt deadline must be positive");
  BOOST_TEST(refusal([](SystemConfig& c) {
               c.policy.attempt_deadline = microseconds(1);
               c.policy.lease = microseconds(2);
             }) == "");
}

BOOST_AUTO_TEST_CASE(the_lease_must_outlast_the_deadline) {
  const std::string message = "lease must be longer than the attempt deadline";
  BOOST_TEST(refusal([](SystemConfig& c) { c.policy.lease = c.policy.attempt_deadline; }) ==
             message);
  BOOST_TEST(refusal([](SystemConfig& c) {
               c.policy.lease = c.policy.attempt_deadline - microseconds(1);
             }) == message);
  BOOST_TEST(refusal([](SystemConfig& c) {
               c.policy.lease = c.policy.attempt_deadline + microseconds(1);
             }) == "");
}

BOOST_AUTO_TEST_CASE(every_period_must_be_positive) {
  const std::string message =
      "reconcile period, status timeout, worker poll and worker idle poll must be positive";
  using Field = Duration Policy::*;
  const Field fields[] = {&Policy::reconcile_period, &Policy::worker_poll,
                          &Policy::worker_idle_poll, &Policy::status_timeout};
  for (const Field field : fields) {
    for (const auto value : {microseconds(0), microseconds(-1)}) {
      BOOST_TEST(refusal([&](SystemConfig& c) { c.policy.*field = value; }) == message);
    }
    BOOST_TEST(refusal([&](SystemConfig& c) { c.policy.*field = microseconds(1); }) == "");
  }
}

BOOST_AUTO_TEST_CASE(capacity_and_limits_have_their_floors) {
  const std::string message =
      "worker capacity and attempt limit must be at least 1, the re-drive limit at least 0";
  using Field = int Policy::*;
  struct Floor {
    Field field;
    int least;
  };
  const Floor floors[] = {
      {&Policy::worker_capacity, 1}, {&Policy::attempt_limit, 1}, {&Policy::redrive_limit, 0}};
  for (const auto& floor : floors) {
    BOOST_TEST(refusal([&](SystemConfig& c) { c.policy.*floor.field = floor.least - 1; }) ==
               message);
    BOOST_TEST(refusal([&](SystemConfig& c) { c.policy.*floor.field = floor.least; }) == "");
  }
}

BOOST_AUTO_TEST_CASE(providers_are_named_once) {
  BOOST_TEST(refusal([](SystemConfig& c) { c.providers.push_back(provider("")); }) ==
             "a provider has no name");
  BOOST_TEST(refusal([](SystemConfig& c) { c.providers.push_back(provider("alpha")); }) ==
             "provider \"alpha\" is configured twice");
  BOOST_TEST(refusal([](SystemConfig& c) { c.providers.clear(); }) == "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
