#include "harness/sim/trace.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "system/events/api_events.hpp"

#include "harness/sim/rng.hpp"

#include "tests/support/recording_sink.hpp"

namespace onejob::sim {
namespace {

// The same line made through nlohmann::ordered_json: what the direct writer is tested against.
std::string to_json_line_reference(const TraceEvent& event) {
  // ordered_json keeps insertion order, so the line reads seq, time, node, kind, data.
  nlohmann::ordered_json line;
  line["seq"] = event.seq;
  line["t_us"] = event.at.time_since_epoch().count();
  line["node"] = event.node.str();
  line["kind"] = event.event.kind();
  if (event.injected) line["injected"] = true;
  nlohmann::ordered_json data = nlohmann::ordered_json::object();
  for (const auto& field : event.event.fields()) {
    const std::string& name = field.name();
    std::visit([&data, &name](const auto& v) { data[name] = v; }, event.event.value(field));
  }
  line["data"] = std::move(data);
  // Replace rather than throw on bytes that are not UTF-8: a trace must always be writable.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

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

// hex64 writes what printf's "%016llx" writes: sixteen lower-case digits, leading zeros kept.
BOOST_AUTO_TEST_CASE(hex64_writes_sixteen_lower_case_digits) {
  std::vector<std::uint64_t> values{0, 1, 0xF, 0x10, 0x0123456789abcdefULL, UINT64_MAX};
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 200; ++i)
    values.push_back(x = x * 6364136223846793005ULL + 1442695040888963407ULL);
  for (const std::uint64_t value : values) {
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016llx", static_cast<unsigned long long>(value));
    BOOST_TEST_REQUIRE(hex64(value) == std::string(expected), value);
  }
}

BOOST_AUTO_TEST_CASE(bytes_that_are_not_utf8_cannot_break_a_trace) {
  test::ManualClock clock;
  Trace trace(clock);
  trace.record("n", Event("k").with("blob", std::string("\xff\xfe")));
  BOOST_TEST(trace.to_jsonl().find("\"blob\":") != std::string::npos);
}

// The direct writer against nlohmann::ordered_json's rendering, on strings made of every kind
// of byte (quotes, backslashes, control characters, DEL, valid multi-byte UTF-8, stray
// continuation bytes, overlongs, surrogates, truncated sequences), repeated field names,
// negative and extreme numbers: byte-identical lines, so no trace hash changes.
BOOST_AUTO_TEST_CASE(the_direct_writer_matches_nlohmann_byte_for_byte) {
  const std::vector<std::string> pieces = {"",
                                           "a",
                                           "\"",
                                           "\\",
                                           "/",
                                           "\b\f\n\r\t",
                                           std::string(1, '\0'),
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "caf\xc3\xa9",
                                           "\xe2\x82\xac",
                                           "\xf0\x9f\x98\x80",
                                           "\xc3",
                                           "\x80",
                                           "\xc0\xaf",
                                           "\xed\xa0\x80",
                                           "\xf4\x90\x80\x80",
                                           "\xe2\x82",
                                           "\xff",
                                           "\xef\xbf\xbd",
                                           "plain text with spaces"};
  Rng rng(11);
  test::ManualClock clock;
  for (int round = 0; round < 3000; ++round) {
    auto text = [&] {
      std::string out;
      const auto n = rng.below(5);
      for (std::uint64_t i = 0; i < n; ++i) out += pieces[rng.below(pieces.size())];
      return out;
    };
    Event event(text());
    const auto fields = rng.below(6);
    for (std::uint64_t i = 0; i < fields; ++i) {
      const std::string name = rng.below(3) == 0 ? std::string("dup") : text();
      switch (rng.below(3)) {
        case 0:
          event.with(name, static_cast<std::int64_t>(rng.next()));
          break;
        case 1:
          event.with(name, rng.below(2) == 1);
          break;
        default:
          event.with(name, text());
      }
    }
    const TraceEvent traced{rng.next() >> 1, Instant{Duration{rng.between(-5, 1'000'000'000)}},
                            text(), std::move(event), rng.below(2) == 1};
    const std::string direct = to_json_line(traced);
    const std::string reference = to_json_line_reference(traced);
    BOOST_TEST_REQUIRE(direct == reference, "round " << round);
  }
}

// A packed history gives back every event as it was recorded: kind, node, instant, injected,
// and each field's name, type and value in order, repeats included; an event bigger than a
// chunk, empty strings, bytes that are not UTF-8 and extreme integers too.
BOOST_AUTO_TEST_CASE(a_packed_history_unpacks_every_event_as_recorded) {
  Rng rng(29);
  const std::string big(std::size_t{3} << 20, 'x');
  const std::string pieces[] = {"", "a", "job", "\xff\x00z", "\"", big.substr(0, 300)};
  const std::int64_t extremes[] = {0, -1, 1, INT64_MIN, INT64_MAX, 127, 128, -64, -65};
  std::vector<TraceEvent> recorded;
  History history;
  std::int64_t micros = -10;
  for (int round = 0; round < 2000; ++round) {
    Event event(pieces[rng.below(5)] + "kind");
    const auto fields = rng.below(8);
    for (std::uint64_t i = 0; i < fields; ++i) {
      const std::string name = rng.below(3) == 0 ? std::string("dup") : pieces[rng.below(6)];
      switch (rng.below(4)) {
        case 0:
          event.with(name, extremes[rng.below(std::size(extremes))]);
          break;
        case 1:
          event.with(name, static_cast<std::int64_t>(rng.next()));
          break;
        case 2:
          event.with(name, rng.below(2) == 1);
          break;
        default:
          event.with(name, pieces[rng.below(6)]);
      }
    }
    if (round == 1000) event.with("big", big);
    micros += static_cast<std::int64_t>(rng.below(3) == 0 ? rng.next() >> 40 : 0);
    TraceEvent traced{static_cast<std::uint64_t>(round) + 1, Instant{Duration{micros}},
                      pieces[rng.below(5)], std::move(event), rng.below(2) == 1};
    history.push_back(traced);
    recorded.push_back(std::move(traced));
  }
  BOOST_TEST_REQUIRE(history.size() == recorded.size());
  std::size_t index = 0;
  for (const auto& unpacked : history) {
    const TraceEvent& original = recorded[index];
    BOOST_TEST_REQUIRE(unpacked.seq == original.seq);
    BOOST_TEST_REQUIRE((unpacked.at == original.at), "event " << index);
    BOOST_TEST_REQUIRE((unpacked.node == original.node), "event " << index);
    BOOST_TEST_REQUIRE(unpacked.injected == original.injected, "event " << index);
    BOOST_TEST_REQUIRE((unpacked.event == original.event), "event " << index);
    BOOST_TEST_REQUIRE(to_json_line(history[index]) == to_json_line(original), "event " << index);
    BOOST_TEST_REQUIRE((history.instant(index) == original.at));
    BOOST_TEST_REQUIRE((history.node(index) == original.node));
    BOOST_TEST_REQUIRE(&history.kind(index) == &original.event.kind());
    ++index;
  }
  BOOST_TEST(index == recorded.size());
  BOOST_CHECK_THROW(history.at(history.size()), std::out_of_range);
  // Packed again, each event is the same as before; one changed in any part is not.
  History again;
  for (const auto& traced : recorded) again.push_back(traced);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    BOOST_TEST_REQUIRE(history.same_event(i, again, i), "event " << i);
  }
  BOOST_TEST(!history.same_event(0, again, 1));
  History changed;
  for (TraceEvent traced : recorded) {
    switch (traced.seq % 4) {
      case 0:
        traced.event.with("extra", false);
        break;
      case 1:
        traced.at += Duration{1};
        break;
      case 2:
        traced.injected = !traced.injected;
        break;
      default:
        traced.event = Event(traced.event.kind() + "!");
    }
    changed.push_back(traced);
  }
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    BOOST_TEST_REQUIRE(!history.same_event(i, changed, i), "event " << i);
  }
  // The big event's bytes, once, and little else.
  BOOST_TEST(history.bytes() > big.size());
  BOOST_TEST(history.bytes() < big.size() + (std::size_t{4} << 20));
}

// Strings that recur under one field name are kept once and read back the same, unpacked or in
// place, interleaved in any order with strings kept in the event (new ones under a field that
// already has its fill of words, long ones, empty ones), in events with many string fields.
BOOST_AUTO_TEST_CASE(strings_that_recur_under_a_field_are_kept_once_and_read_back_alike) {
  Rng rng(31);
  const std::string states[] = {"starting", "running", "succeeded", "unknown"};
  const std::string long_word(80, 'w');  // too long to be a word
  std::vector<TraceEvent> recorded;
  History history;
  // Words are made once a history is long; the first events keep their strings.
  for (std::size_t i = 0; i < History::kWordsFrom; ++i) {
    TraceEvent traced{i + 1, Instant{}, "world", Event("filler").with("i", std::int64_t{7}), false};
    history.push_back(traced);
    recorded.push_back(std::move(traced));
  }
  constexpr int kEvents = 10'000;
  for (int round = 0; round < kEvents; ++round) {
    Event event("attempt.state");
    event.with("request_id", "r" + std::to_string(round));  // a new value every time
    event.with("to", states[rng.below(4)]);
    if (rng.below(3) == 0) event.with("empty", std::string());
    event.with("from", states[rng.below(4)]);
    if (rng.below(5) == 0) event.with("note", long_word);
    event.with("attempt_id", static_cast<std::int64_t>(round));
    if (round % 1000 == 0) {  // more string fields than the packer notes on its first pass
      for (int i = 0; i < 20; ++i) {
        event.with(i % 2 == 0 ? "to" : "request_id",
                   i % 3 == 0 ? states[i % 4] : "x" + std::to_string(i));
      }
    }
    TraceEvent traced{static_cast<std::uint64_t>(round) + 1, Instant{Duration{round}}, "worker-1",
                      std::move(event), false};
    history.push_back(traced);
    recorded.push_back(std::move(traced));
  }
  std::size_t index = 0;
  for (const auto& unpacked : history) {
    BOOST_TEST_REQUIRE((unpacked.event == recorded[index].event), "event " << index);
    ++index;
  }
  index = 0;
  history.visit_packed([&](const PackedEvent& packed) {
    const Event& original = recorded[index].event;
    BOOST_TEST_REQUIRE(packed.fields.size() == original.fields().size(), "event " << index);
    for (std::size_t i = 0; i < packed.fields.size(); ++i) {
      const auto& field = original.fields()[i];
      BOOST_TEST_REQUIRE((packed.fields[i].name_id == field.name_id), "event " << index);
      if (field.type() != Event::Field::Type::string) continue;
      BOOST_TEST_REQUIRE(packed.text(packed.fields[i]) == original.text(field),
                         "event " << index << " field " << i);
    }
    ++index;
  });
  BOOST_TEST(index == recorded.size());
  // Packed again alike, event by event.
  History again;
  for (const auto& traced : recorded) again.push_back(traced);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    BOOST_TEST_REQUIRE(history.same_event(i, again, i), "event " << i);
  }
  // Two long histories that name different new words alike (each its first word under "to")
  // hold the same bytes for them, yet their events differ.
  History running;
  History unknown;
  for (std::size_t i = 0; i < History::kWordsFrom; ++i) {
    running.push_back(recorded[i]);
    unknown.push_back(recorded[i]);
  }
  running.append(Instant{}, "worker-1", Event("attempt.state").with("to", "running"), false);
  unknown.append(Instant{}, "worker-1", Event("attempt.state").with("to", "unknown"), false);
  BOOST_TEST(running.same_event(History::kWordsFrom - 1, unknown, History::kWordsFrom - 1));
  BOOST_TEST(!running.same_event(History::kWordsFrom, unknown, History::kWordsFrom));
  BOOST_TEST(running.same_event(History::kWordsFrom, running, History::kWordsFrom));

  // A word is kept once: 10,000 events naming one 60-byte state hold far less than its
  // 600,000 bytes.
  const std::string state(60, 's');
  History states_only;
  const auto bytes_for = [&](std::size_t events) {
    for (std::size_t i = states_only.size(); i < events; ++i) {
      states_only.append(Instant{}, "worker-1", Event("attempt.state").with("to", state), false);
    }
    return states_only.bytes();
  };
  const std::size_t short_bytes = bytes_for(History::kWordsFrom);
  BOOST_TEST(short_bytes > History::kWordsFrom * state.size());  // each event holds it
  const std::size_t long_bytes = bytes_for(History::kWordsFrom + 100'000);
  BOOST_TEST(long_bytes - short_bytes < std::size_t{100'000} * state.size() / 2);
  BOOST_TEST((states_only[states_only.size() - 1].event.string_field("to") == state));
  BOOST_TEST((states_only[0].event.string_field("to") == state));
}

// The history's text, rendered from events read in place into pieces of any size, is the
// reference's lines joined, and its hash is FNV-1a of exactly those bytes: strings that grow the
// most when escaped (control bytes: six each), bytes that are not UTF-8, and an event bigger than
// any piece included.
BOOST_AUTO_TEST_CASE(rendered_pieces_join_to_the_reference_lines_whatever_their_size) {
  const std::string controls(5000, '\x01');
  const std::string quotes(3000, '"');
  const std::string broken = "\xff\xc3\xe2\x82" + std::string(100, '\x1f');
  const std::string big(std::size_t{2} << 20, '\n');
  const std::string texts[] = {"", "job", controls, quotes, broken, "caf\xc3\xa9"};
  Rng rng(41);
  History history;
  std::string expected;
  for (int round = 0; round < 300; ++round) {
    Event event(texts[rng.below(2)] + "kind");
    const auto fields = rng.below(5);
    for (std::uint64_t i = 0; i < fields; ++i) {
      const std::string name = rng.below(3) == 0 ? std::string("dup") : texts[rng.below(6)];
      if (rng.below(2) == 0) {
        event.with(name, static_cast<std::int64_t>(rng.next()));
      } else {
        event.with(name, texts[rng.below(6)]);
      }
    }
    if (round == 150) event.with("big", big);
    const TraceEvent traced{static_cast<std::uint64_t>(round) + 1, Instant{Duration{round}},
                            texts[rng.below(6)], std::move(event), rng.below(2) == 1};
    history.push_back(traced);
    expected += to_json_line_reference(traced) + "\n";
  }
  for (const std::size_t piece_bytes : {std::size_t{1}, std::size_t{4096}, std::size_t{1} << 20}) {
    std::string joined;
    std::size_t pieces = 0;
    render_jsonl_pieces(
        history,
        [&](std::string_view piece) {
          BOOST_TEST_REQUIRE(!piece.empty());
          joined += piece;
          ++pieces;
        },
        piece_bytes);
    BOOST_TEST_REQUIRE(joined == expected, "pieces of " << piece_bytes << " bytes");
    // A piece is handed on once it holds piece_bytes: with one byte, every line is a piece.
    if (piece_bytes == 1) BOOST_TEST(pieces == history.size());
  }
  BOOST_TEST(render_jsonl(history) == expected);
  BOOST_TEST(hash_jsonl(history) == hex64(fnv1a64(expected)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::sim
