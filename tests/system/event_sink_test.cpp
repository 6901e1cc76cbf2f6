#include "system/ports/event_sink.hpp"

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

namespace onejob {
namespace {

// Names (event kinds, field names, nodes) interned once per process.
BOOST_AUTO_TEST_SUITE(event_sink)

// A name interned from a buffer of its own (as a node's name read back from an event is) is the
// one interned string for those bytes: the same from every buffer, and never another name's,
// however many names share a slot of the per-thread caches.
BOOST_AUTO_TEST_CASE(a_name_from_any_buffer_is_interned_once) {
  std::vector<std::string> names{"", std::string(64, 'x'), std::string(65, 'x')};
  for (int i = 0; i < 3000; ++i) names.push_back("node-" + std::to_string(i));
  std::vector<const std::string*> first;
  for (const auto& name : names) first.push_back(&intern_name(std::string(name)));
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string copy = names[i];  // a buffer of its own
      const std::string& got = intern_name(copy);
      BOOST_REQUIRE_EQUAL(got, names[i]);
      BOOST_REQUIRE(&got == first[i]);
      BOOST_REQUIRE(&interned(intern_id(copy)) == first[i]);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
