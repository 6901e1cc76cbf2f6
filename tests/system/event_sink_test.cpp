#include "system/ports/event_sink.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "system/events/api_events.hpp"

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

// Appends `fields` of `from` to `out`, in that order.
void append(Event& out, const Event& from, const std::vector<Event::Field>& fields) {
  for (const auto& field : fields) {
    const Event::NameId name{field.name_id};
    switch (field.type()) {
      case Event::Field::Type::integer:
        out.with(name, field.number);
        break;
      case Event::Field::Type::boolean:
        out.with(name, field.number != 0);
        break;
      case Event::Field::Type::string:
        out.with(name, from.text(field));
        break;
    }
  }
}

// `fields` of `from`, in that order, as a new event of its kind.
Event with_fields(const Event& from, const std::vector<Event::Field>& fields) {
  Event out(from.kind());
  append(out, from, fields);
  return out;
}

// A typed read finds each field wherever the event lists it: in the type's order (as to_event
// writes it), last to first, or turned about its middle; a required field missing or of another
// type means the event is not the type's.
BOOST_AUTO_TEST_CASE(a_typed_read_finds_fields_in_any_order) {
  const events::ApiResponse response{.request_id = "r-1",
                                     .route = "get_job",
                                     .status = 200,
                                     .owner = "alice",
                                     .key = "k-1",
                                     .job_id = 7,
                                     .error = "none"};  // attempt_id and detail absent
  const Event ordered = events::to_event(response);
  std::vector<Event::Field> fields(ordered.fields().begin(), ordered.fields().end());
  BOOST_REQUIRE_EQUAL(fields.size(), 7U);
  std::vector<std::vector<Event::Field>> orders{fields};
  orders.emplace_back(fields.rbegin(), fields.rend());
  for (std::size_t middle = 1; middle < fields.size(); ++middle) {
    auto turned = fields;
    std::rotate(turned.begin(), turned.begin() + static_cast<std::ptrdiff_t>(middle), turned.end());
    orders.push_back(std::move(turned));
  }
  for (std::size_t i = 0; i < orders.size(); ++i) {
    BOOST_TEST_CONTEXT("order " << i) {
      const auto back = events::from_event<events::ApiResponse>(with_fields(ordered, orders[i]));
      BOOST_REQUIRE(back.has_value());
      BOOST_TEST((events::to_event(*back) == ordered));
    }
  }
  // A name given twice: the first is the field, after the others or before them.
  Event after = with_fields(ordered, fields);
  after.with("job_id", std::int64_t{8});
  BOOST_TEST((events::from_event<events::ApiResponse>(after)->job_id == 7));
  Event before(ordered.kind());
  before.with("job_id", std::int64_t{8});
  append(before, ordered, fields);
  BOOST_TEST((events::from_event<events::ApiResponse>(before)->job_id == 8));
  // Without "status", or with it as a text: not an ApiResponse.
  auto without = fields;
  without.erase(without.begin() + 2);
  BOOST_TEST(!events::from_event<events::ApiResponse>(with_fields(ordered, without)).has_value());
  Event as_text = with_fields(ordered, without);
  as_text.with("status", "200");
  BOOST_TEST(!events::from_event<events::ApiResponse>(as_text).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob
