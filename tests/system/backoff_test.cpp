// Backoff: capped exponential waits with jitter, drawn from the injected Random.
#include "system/service/backoff.hpp"

#include <set>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "harness/sim/rng.hpp"

namespace onejob {
namespace {

using std::chrono::milliseconds;

BOOST_AUTO_TEST_SUITE(backoff)

BOOST_AUTO_TEST_CASE(waits_double_within_half_to_full_and_stop_at_the_cap) {
  sim::RngRandom random{sim::Rng{7}};
  Backoff backoff(milliseconds(100), milliseconds(1000));
  const milliseconds limits[] = {milliseconds(100), milliseconds(200),  milliseconds(400),
                                 milliseconds(800), milliseconds(1000), milliseconds(1000)};
  for (const auto limit : limits) {
    const Duration wait = backoff.next(random);
    BOOST_TEST_CONTEXT("limit " << limit.count() << " ms, wait " << wait.count() << " us") {
      BOOST_TEST(wait.count() >= Duration(limit).count() / 2);
      BOOST_TEST(wait.count() <= Duration(limit).count());
    }
  }
}

BOOST_AUTO_TEST_CASE(reset_starts_again_from_base) {
  sim::RngRandom random{sim::Rng{7}};
  Backoff backoff(milliseconds(100), milliseconds(1000));
  for (int i = 0; i < 10; ++i) backoff.next(random);
  backoff.reset();
  BOOST_TEST(backoff.next(random).count() <= Duration(milliseconds(100)).count());
}

// The jitter is real (not one fixed wait) and a function of the random stream alone.
BOOST_AUTO_TEST_CASE(jitter_varies_and_is_reproducible) {
  auto waits = [](std::uint64_t seed) {
    sim::RngRandom random{sim::Rng{seed}};
    std::vector<Duration::rep> out;
    for (int i = 0; i < 20; ++i) {
      Backoff backoff(milliseconds(100), milliseconds(100));
      out.push_back(backoff.next(random).count());
    }
    return out;
  };
  const auto first = waits(3);
  BOOST_TEST(first == waits(3));
  BOOST_TEST(first != waits(4));
  BOOST_TEST(std::set<Duration::rep>(first.begin(), first.end()).size() > 10);
}

BOOST_AUTO_TEST_CASE(a_cap_below_base_is_the_base) {
  sim::RngRandom random{sim::Rng{1}};
  Backoff backoff(milliseconds(100), milliseconds(10));
  for (int i = 0; i < 5; ++i) {
    const Duration wait = backoff.next(random);
    BOOST_TEST(wait.count() >= Duration(milliseconds(50)).count());
    BOOST_TEST(wait.count() <= Duration(milliseconds(100)).count());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
