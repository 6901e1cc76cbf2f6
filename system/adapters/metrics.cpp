#include "system/adapters/metrics.hpp"

#include <utility>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "system/domain/attempt.hpp"
#include "system/events/api_events.hpp"
#include "system/events/attempt_events.hpp"
#include "system/events/reconciler_events.hpp"
#include "system/events/worker_events.hpp"

namespace onejob {
namespace {

using Labels = std::vector<std::string>;

constexpr std::string_view kOther = "other";
// A store error whose event does not say which kind it was (the reconciler's carries only the
// message, which is free text and so no label value).
constexpr std::string_view kUnclassified = "unclassified";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

constexpr std::array<double, 13> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1,     2.5,  5,     10};
// Spelled out rather than printed from kBounds: the `le` text is part of the series' identity,
// and must not depend on how a double happens to print.
constexpr std::array<std::string_view, kBounds.size() + 1> kBoundNames = {
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",  "0.5",    "1",     "2.5",  "5",     "10",   "+Inf"};

// Prometheus refuses a label value that is not UTF-8: one event carrying a stray byte must not
// make the whole scrape unreadable.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      out += static_cast<char>(lead);
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    std::uint32_t least = 0;  // below this the encoding is overlong
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
      least = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
      least = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
      least = 0x10000;
    }
    bool ok = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      ok = (next & 0xC0) == 0x80;
      code = (code << 6) | (next & 0x3F);
    }
    ok = ok && code >= least && code <= 0x10FFFF && (code < 0xD800 || code > 0xDFFF);
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out.append(kReplacement);
      ++i;
    }
  }
  return out;
}

void append_label_value(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// {a="x",b="y"}; `extra` is one more label after them (a histogram bucket's le).
void append_labels(std::string& out, const std::vector<std::string_view>& names,
                   const Labels& values, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  out += '{';
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out.append(names[i]).append("=\"");
    append_label_value(out, values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out.append(extra_name).append("=\"").append(extra_value).append("\"");
  }
  out += '}';
}

// The shortest text that reads back as the same double.
std::string number_text(double value) {
  std::array<char, 32> buffer{};
  const auto end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value).ptr;
  return std::string(buffer.data(), end);
}

class Family {
 public:
  Family(std::string_view name, std::string_view help, std::string_view type,
         std::vector<std::string_view> label_names)
      : name_(name), help_(help), type_(type), label_names_(std::move(label_names)) {}
  virtual ~Family() = default;

  std::string_view name() const { return name_; }
  // HELP texts are constants here, free of backslashes and newlines: written as they are.
  void render(std::string& out) const {
    out.append("# HELP ").append(name_).append(" ").append(help_).append("\n");
    out.append("# TYPE ").append(name_).append(" ").append(type_).append("\n");
    render_series(out);
  }

 protected:
  virtual void render_series(std::string& out) const = 0;

  // The series `labels` names, or the overflow series when the family is full.
  template <typename Map>
  typename Map::mapped_type& series_of(Map& series, Labels labels) {
    auto found = series.find(labels);
    if (found != series.end()) return found->second;
    if (series.size() >= Metrics::kMaxSeries) labels.assign(labels.size(), std::string(kOther));
    return series[std::move(labels)];
  }

  const std::string_view name_;
  const std::string_view help_;
  const std::string_view type_;
  const std::vector<std::string_view> label_names_;
};

class CounterFamily final : public Family {
 public:
  CounterFamily(std::string_view name, std::string_view help,
                std::vector<std::string_view> label_names)
      : Family(name, help, "counter", std::move(label_names)) {}

  void add(Labels labels) { ++series_of(series_, std::move(labels)); }

 private:
  void render_series(std::string& out) const override {
    for (const auto& [labels, count] : series_) {
      out.append(name_);
      append_labels(out, label_names_, labels);
      out.append(" ").append(std::to_string(count)).append("\n");
    }
  }

  std::map<Labels, std::uint64_t> series_;
};

class HistogramFamily final : public Family {
 public:
  HistogramFamily(std::string_view name, std::string_view help,
                  std::vector<std::string_view> label_names)
      : Family(name, help, "histogram", std::move(label_names)) {}

  void add(Labels labels, double value) {
    Histogram& histogram = series_of(series_, std::move(labels));
    // The first bucket whose bound the value does not exceed (le is inclusive); +Inf past all.
    const auto bound = std::ranges::lower_bound(kBounds, value);
    ++histogram.counts[static_cast<std::size_t>(bound - kBounds.begin())];
    histogram.sum += value;
    ++histogram.count;
  }

 private:
  struct Histogram {
    std::array<std::uint64_t, kBoundNames.size()> counts{};  // per bucket, not cumulative
    double sum = 0;
    std::uint64_t count = 0;
  };

  void render_series(std::string& out) const override {
    for (const auto& [labels, histogram] : series_) {
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < kBoundNames.size(); ++i) {
        cumulative += histogram.counts[i];
        out.append(name_).append("_bucket");
        append_labels(out, label_names_, labels, "le", kBoundNames[i]);
        out.append(" ").append(std::to_string(cumulative)).append("\n");
      }
      out.append(name_).append("_sum");
      append_labels(out, label_names_, labels);
      out.append(" ").append(number_text(histogram.sum)).append("\n");
      out.append(name_).append("_count");
      append_labels(out, label_names_, labels);
      out.append(" ").append(std::to_string(histogram.count)).append("\n");
    }
  }

  std::map<Labels, Histogram> series_;
};

std::string utc_text(std::chrono::sys_time<std::chrono::milliseconds> at) {
  const auto day = std::chrono::floor<std::chrono::days>(at);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss time{at - day};
  std::array<char, 48> buffer{};
  const int length = std::snprintf(
      buffer.data(), buffer.size(), "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
      static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
      static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
      static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
      static_cast<int>(time.subseconds().count()));
  return std::string(buffer.data(), static_cast<std::size_t>(std::max(length, 0)));
}

}  // namespace

struct Metrics::State {
  CounterFamily http_requests{"onejob_http_requests_total",
                              "HTTP requests answered, by route and status.",
                              {"route", "status"}};
  HistogramFamily request_seconds{"onejob_http_request_duration_seconds",
                                  "Time from a request's arrival to its answer, by route.",
                                  {"route"}};
  CounterFamily transitions{"onejob_attempt_transitions_total",
                            "Attempt state changes applied, by the state entered.",
                            {"to"}};
  CounterFamily cas{
      "onejob_cas_total", "Completion compare-and-swaps, by outcome (won or lost).", {"outcome"}};
  CounterFamily store_errors{"onejob_store_errors_total",
                             "Store errors met, by the component that met them and their kind.",
                             {"component", "kind"}};
  CounterFamily provider_calls{"onejob_provider_calls_total",
                               "Provider replies received, by provider and reply kind.",
                               {"provider", "outcome"}};
  CounterFamily events{"onejob_events_total", "Events emitted, by kind.", {"kind"}};

  // Every family, by name: the order render() prints them in.
  std::vector<const Family*> by_name = [this] {
    std::vector<const Family*> all{&http_requests, &request_seconds, &transitions, &cas,
                                   &store_errors,  &provider_calls,  &events};
    std::ranges::sort(all, {}, &Family::name);
    return all;
  }();
};

Metrics::Metrics() : state_(std::make_unique<State>()) {}
Metrics::~Metrics() = default;

void Metrics::observe(const Event& event) {
  // The events are read (and their label values cleaned) before the lock is taken: only the
  // counting is serialized.
  struct Count {
    CounterFamily* family;
    Labels labels;
  };
  std::vector<Count> counts;
  counts.reserve(3);
  auto count = [&](CounterFamily& family, std::initializer_list<std::string_view> values) {
    Labels labels;
    labels.reserve(values.size());
    for (const auto value : values) labels.push_back(valid_utf8(value));
    counts.push_back(Count{&family, std::move(labels)});
  };
  State& state = *state_;  // never replaced: reading the pointer needs no lock
  const std::string& kind = event.kind();
  count(state.events, {kind});
  if (kind == events::ApiResponse::kind) {
    if (auto response = events::from_event<events::ApiResponse>(event)) {
      count(state.http_requests, {response->route, std::to_string(response->status)});
      if (response->status == 503) {
        count(state.store_errors, {"api", response->error.value_or(std::string(kUnclassified))});
      }
    }
  } else if (kind == events::AttemptStateChanged::kind) {
    if (auto changed = events::from_event<events::AttemptStateChanged>(event)) {
      count(state.transitions, {to_string(changed->to)});
    }
  } else if (kind == events::AttemptCreated::kind) {
    // Every store creates an attempt STARTING (starting_attempt in system/ports/store.hpp); the
    // event does not repeat the state.
    if (events::from_event<events::AttemptCreated>(event)) {
      count(state.transitions, {to_string(AttemptState::starting)});
    }
  } else if (kind == events::JobCas::kind) {
    if (auto cas = events::from_event<events::JobCas>(event)) {
      count(state.cas, {cas->won ? "won" : "lost"});
    }
  } else if (kind == events::WorkerStoreError::kind) {
    // The event tells only whether the write may have committed; unavailable, conflict and
    // rejected all wrote nothing.
    if (auto error = events::from_event<events::WorkerStoreError>(event)) {
      count(state.store_errors,
            {"worker", error->maybe_committed ? "maybe_committed" : "not_committed"});
    }
  } else if (kind == events::ReconcilerStoreError::kind) {
    if (events::from_event<events::ReconcilerStoreError>(event)) {
      count(state.store_errors, {"reconciler", kUnclassified});
    }
  } else if (kind == events::ProviderReplied::kind) {
    if (auto reply = events::from_event<events::ProviderReplied>(event)) {
      count(state.provider_calls, {reply->provider, reply->reply});
    }
  }
  const std::lock_guard lock(mutex_);
  for (auto& [family, labels] : counts) family->add(std::move(labels));
}

void Metrics::observe_request_seconds(std::string_view route, double seconds) {
  if (!std::isfinite(seconds)) return;
  Labels labels{valid_utf8(route)};
  const std::lock_guard lock(mutex_);
  state_->request_seconds.add(std::move(labels), std::max(seconds, 0.0));
}

std::string Metrics::render() const {
  std::string out;
  const std::lock_guard lock(mutex_);
  for (const Family* family : state_->by_name) family->render(out);
  return out;
}

std::string json_log_line(const Event& event, std::string_view node,
                          std::chrono::sys_time<std::chrono::milliseconds> at) {
  nlohmann::ordered_json line;
  line["ts"] = utc_text(at);
  line["node"] = std::string(node);
  line["event"] = event.kind();
  for (const auto& field : event.fields()) {
    const std::string& name = field.name();
    const bool taken = name == "ts" || name == "node" || name == "event";
    auto& slot = line[taken ? "field_" + name : name];
    switch (field.type()) {
      case Event::Field::Type::integer:
        slot = field.number;
        break;
      case Event::Field::Type::boolean:
        slot = field.number != 0;
        break;
      case Event::Field::Type::string:
        slot = std::string(event.text(field));
        break;
    }
  }
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

JsonLogSink::JsonLogSink(std::ostream& out, std::mutex& out_mutex, std::string node,
                         Metrics* metrics, EventSink* next)
    : out_(out), out_mutex_(out_mutex), node_(std::move(node)), metrics_(metrics), next_(next) {}

void JsonLogSink::emit(Event event) {
  if (enabled()) {
    // Production wiring: a log line carries the wall-clock time a reader correlates with other
    // logs. Nothing on the simulation path uses this sink.
    const auto now =
        std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
    std::string line = json_log_line(event, node_, now);
    line += '\n';
    const std::lock_guard lock(out_mutex_);
    out_.write(line.data(), static_cast<std::streamsize>(line.size()));
    out_.flush();
  }
  if (metrics_ != nullptr) metrics_->observe(event);
  if (next_ != nullptr) next_->emit(std::move(event));
}

}  // namespace onejob
