#include "harness/sim/sim_provider.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <nlohmann/json.hpp>

#include "system/domain/check.hpp"

#include "harness/events/provider_events.hpp"
#include "harness/sim/text_slots.hpp"

namespace onejob::sim {
namespace {

using nlohmann::json;

std::string correct_output(const std::string& operation, const json& input, std::uint64_t variant) {
  const auto& text = input["text"].get_ref<const std::string&>();
  if (operation == "classify") {
    std::string label = "other";
    if (text.find("charged") != std::string::npos || text.find("nvoice") != std::string::npos ||
        text.find("refund") != std::string::npos) {
      label = "billing";
    } else if (text.find("crash") != std::string::npos) {
      label = "support";
    } else if (text.find("pricing") != std::string::npos ||
               text.find("quote") != std::string::npos) {
      label = "sales";
    }
    // Now and then exactly at the contract's bounds (0 and 1 are valid confidences), written
    // as a JSON integer half of those times: a number, whichever way it is spelled.
    if (variant % 16 == 0 || variant % 16 == 1) {
      return json{{"label", label}, {"confidence", 1 - static_cast<int>(variant % 16)}}.dump();
    }
    const double confidence = variant % 8 == 0 ? 1.0
                              : variant % 8 == 1
                                  ? 0.0
                                  : 0.5 + static_cast<double>(variant % 4999) / 10000.0;
    return json{{"label", label}, {"confidence", confidence}}.dump();
  }
  if (operation == "summarize") {
    // The first half of the text, a little shorter by variant, cut between UTF-8 characters and
    // never empty (a text of one character has no valid summary).
    const std::size_t shorter = variant % std::max<std::size_t>(1, text.size() / 4);
    std::size_t cut = std::max<std::size_t>(1, text.size() / 2 - shorter);
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
    std::string summary = text.substr(0, cut);
    // A quarter of the time in capitals (ASCII letters): the same point, however it is written.
    if (variant % 4 == 3) {
      for (auto& c : summary) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      }
    }
    return json{{"summary", summary}}.dump();
  }
  json fields = json::object();
  for (const auto& name : input["fields"]) {
    const auto& field = name.get_ref<const std::string&>();
    if (field == "total") {
      fields[field] = "310.00 EUR (ref " + std::to_string(variant % 9973) + ")";
    } else if (field == "due_date") {
      fields[field] = "2026-12-01 (ref " + std::to_string(variant % 9973) + ")";
    } else {
      fields[field] = nullptr;
    }
  }
  return json{{"fields", fields}}.dump();
}

// An answer that breaks the operation's output contract in one way, chosen by `variant`: prose,
// or JSON that breaks one rule of the contract (README "The contract gate") and keeps the others,
// so that each of the contract's checks has an answer only it refuses.
std::string malformed_output(const std::string& operation, const json& input,
                             std::uint64_t variant) {
  constexpr std::string_view kProse =
      "Sure! Here is what I found: it looks like a billing question.";
  const std::uint64_t pick = (variant >> 8) % 7;  // summarize's and extract's ways, prose first
  if (operation == "classify") {
    switch ((variant >> 8) % 9) {
      case 1:
        return json{{"label", "billing"}, {"confidence", 1.5}}.dump();  // above 1
      case 2:
        return json{{"label", "billing"}, {"confidence", -0.25}}.dump();  // below 0
      case 3:
        return json{{"label", "refund"}, {"confidence", 0.9}}.dump();  // no such label
      case 4:
        return json{{"label", 7}, {"confidence", 0.9}}.dump();  // not a text
      case 5:
        return json{{"label", "billing"}, {"confidence", "0.9"}}.dump();  // not a number
      case 6:
        return json{{"label", "billing"}}.dump();  // no confidence
      case 7:
        return R"({"label":"billing","label":"sales","confidence":0.9})";  // a key twice
      case 8:
        return R"(["billing",0.9])";  // not an object
      default:
        return std::string(kProse);
    }
  }
  if (operation == "summarize") {
    const auto& text = input["text"].get_ref<const std::string&>();
    switch (pick) {
      case 0:
        return std::string(kProse);
      case 1:
        return json{{"summary", ""}}.dump();  // empty
      case 2:
        return json{{"summary", 42}}.dump();  // not a text
      case 3:
        return json{{"summary", text + " In short: " + text}}.dump();  // not shorter
      case 4:
        return json::object().dump();  // no summary
      case 5:
        return json{{"summary", "a"}, {"notes", json::array()}}.dump();  // a key besides
      default:
        return json::array({text}).dump();  // not an object
    }
  }
  // extract: the asked-for fields, each found, then one rule broken.
  if (pick == 0) return std::string(kProse);
  json fields = json::object();
  for (const auto& name : input["fields"]) fields[name.get<std::string>()] = "found";
  const std::string first = input["fields"].front().get<std::string>();
  switch (pick) {
    case 1:
      fields.erase(first);  // an asked-for field missing
      break;
    case 2: {
      std::string extra = "not_asked";
      while (fields.contains(extra)) extra += "_";
      fields[extra] = "found";  // a field nobody asked for
      break;
    }
    case 3:
      fields[first] = 42;  // neither a text nor null
      break;
    case 4:
      return json{{"fields", json::array({first})}}.dump();  // not an object
    case 5:
      return json{{"extracted", fields}}.dump();  // no "fields"
    default:
      fields[first] = json::object();  // neither a text nor null
      break;
  }
  return json{{"fields", fields}}.dump();
}

// `input_json` parsed, kept per thread for the texts asked about lately: a run's providers are
// asked about the same few inputs (a job's attempts, the certification samples) over and over.
const json& parsed_input(const std::string& input_json) {
  thread_local TextSlots<json, 64> inputs;
  return inputs.get(input_json, [&input_json](std::uint64_t) { return json::parse(input_json); });
}

}  // namespace

std::string provider_output(ProviderOutcome outcome, const std::string& operation,
                            const std::string& input_json, std::string_view identity,
                            std::uint64_t salt) {
  const json& input = parsed_input(input_json);
  const std::uint64_t variant = fnv1a64(identity);
  switch (outcome) {
    case ProviderOutcome::malformed:
      return malformed_output(operation, input, variant ^ salt);
    case ProviderOutcome::hallucinated_key: {
      auto answer = json::parse(correct_output(operation, input, variant));
      answer["notes"] = "I also checked the customer's history.";
      return answer.dump();
    }
    case ProviderOutcome::plausible: {
      // What the schema asks for, with content that answers nothing: a label that is not the
      // text's, the end of the text as its "summary", fields that were not found.
      const auto& text = input["text"].get_ref<const std::string&>();
      if (operation == "classify") return json{{"label", "other"}, {"confidence", 0.51}}.dump();
      if (operation == "summarize") {
        std::size_t from = text.size() - std::max<std::size_t>(1, text.size() / 3);
        while (from > 0 && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) --from;
        return json{{"summary", text.substr(from)}}.dump();
      }
      // Every field "unknown" but, by variant, one found right (or none): so that a check of each
      // field alone has an answer only it refuses.
      auto answer = json::parse(correct_output(operation, input, variant));
      std::size_t index = 0;
      for (auto& [name, value] : answer["fields"].items()) {
        if ((variant + index++) % 3 != 0) value = "unknown";
      }
      return answer.dump();
    }
    case ProviderOutcome::wrong_operation:
      // The prompt template made it do something else: echo the text back as a "summary".
      return json{{"summary", input["text"]}}.dump();
    default:
      return correct_output(operation, input, variant);
  }
}

std::string garbled_text(ProviderOutcome outcome, const std::string& operation,
                         std::uint64_t variant, bool raw) {
  using namespace std::string_literals;
  const std::string broken = raw ? "\xE2\x82\xFF"s : ""s;  // a euro sign cut short, then 0xFF
  if (outcome == ProviderOutcome::garbled_refusal) return "model overloaded \0"s + broken;
  if (variant % 2 == 1) return "\0"s + broken + " garbled";
  if (operation == "classify") return R"({"label":"billing\u0000","confidence":0.9})";
  if (operation == "extract") return R"({"fields":{"na\u0000me":"x"}})";
  return R"({"summary":"x","note\u0000":1})";
}

SimProvider::SimProvider(const ProviderSpec& spec, Rng rng, SimLoop& loop, Trace& trace)
    // The salt is drawn from a copy: the provider's own draws stay what they were.
    : spec_(spec), rng_(rng), salt_(Rng(rng).next()), loop_(loop), trace_(trace) {}

void SimProvider::receive(const ProviderCall& call, ReplyFn reply) {
  auto [it, first] = executions_.try_emplace(call.provider_key);
  Execution& execution = it->second;
  if (!first) {
    trace_.record(spec_.name, events::to_event(events::ProviderDeduped{
                                  .provider_key = call.provider_key, .done = execution.done}));
    if (execution.done) {
      loop_.schedule_after(Duration(0), [reply, answer = execution.reply] { reply(answer); });
    } else {
      execution.waiting.push_back(std::move(reply));
    }
    return;
  }
  ONEJOB_ASSERT(!call.provider_key.empty(), spec_.name + " called without a provider key");
  execution.waiting.push_back(std::move(reply));
  execute(call);
}

void SimProvider::execute(const ProviderCall& call) {
  const bool certification = call.purpose == CallPurpose::certification;
  const bool scripted = !certification && scripted_executions_ < spec_.script.size();
  ProviderCallSpec behaviour = scripted ? spec_.script[scripted_executions_]
                                        : spec_.default_at(loop_.now().time_since_epoch());
  if (!certification) ++scripted_executions_;
  if (!scripted) {
    behaviour.outcome = outcome_past_script(behaviour.outcome, spec_.plausible_on, call.operation);
  }
  const auto latency_range = behaviour.latency.value_or(spec_.latency);
  ONEJOB_ASSERT(Duration(0) <= latency_range.min && latency_range.min <= latency_range.max,
                spec_.name + ": a latency range from 0 up (the loader checks it)");
  const Duration latency(rng_.between(latency_range.min.count(), latency_range.max.count()));
  ProviderReply reply;
  if (behaviour.outcome == ProviderOutcome::error) {
    reply = {ProviderReply::Kind::rejected, {}, "503 model overloaded"};
  } else if (behaviour.outcome == ProviderOutcome::garbled_refusal ||
             behaviour.outcome == ProviderOutcome::garbled_answer) {
    auto text = garbled_text(behaviour.outcome, call.operation,
                             fnv1a64(spec_.name + "/" + call.provider_key), /*raw=*/true);
    reply = behaviour.outcome == ProviderOutcome::garbled_refusal
                ? ProviderReply{ProviderReply::Kind::rejected, {}, std::move(text)}
                : ProviderReply{ProviderReply::Kind::answered, std::move(text), {}};
  } else if (behaviour.outcome != ProviderOutcome::hang) {
    reply = {ProviderReply::Kind::answered,
             provider_output(behaviour.outcome, call.operation, call.input_json,
                             spec_.name + "/" + call.provider_key, salt_),
             {}};
  }
  const bool hangs = behaviour.outcome == ProviderOutcome::hang;
  std::array<char, 32> temperature{};
  const auto written =
      std::to_chars(temperature.data(), temperature.data() + temperature.size(), call.temperature);
  ONEJOB_ASSERT(written.ec == std::errc(), "a double's shortest text fits 32 bytes");
  trace_.record(spec_.name,
                events::to_event(events::ProviderExecuted{
                    .purpose = std::string(certification ? events::kPurposeCertification
                                                         : events::kPurposeAttempt),
                    .provider_key = call.provider_key,
                    .operation = call.operation,
                    .temperature = std::string(temperature.data(), written.ptr),
                    .prompt_bytes = static_cast<std::int64_t>(call.prompt.size()),
                    .prompt_fnv = fnv1a64_hex(call.prompt),
                    .input = certification ? std::optional(call.input_json) : std::nullopt,
                    .outcome = std::string(to_string(behaviour.outcome)),
                    .output = reply.output,
                    .answers_at = hangs ? std::nullopt : std::optional(loop_.now() + latency),
                }));
  if (hangs) {
    executions_.at(call.provider_key).hangs = true;
    return;
  }
  loop_.schedule_after(latency, [this, key = call.provider_key, reply] {
    Execution& done = executions_.at(key);
    ONEJOB_ASSERT(!done.done && !done.hangs, "an execution answers once, and a hang never");
    done.done = true;
    done.reply = reply;
    auto waiting = std::move(done.waiting);
    for (auto& answer : waiting) answer(reply);
  });
}

bool SimProvider::working() const {
  return std::ranges::any_of(
      executions_, [](const auto& entry) { return !entry.second.done && !entry.second.hangs; });
}

bool SimProvider::answers(const std::string& provider_key) const {
  auto it = executions_.find(provider_key);
  return it != executions_.end() && !it->second.hangs;
}

ProviderStatus SimProvider::status(const std::string& provider_key) const {
  auto it = executions_.find(provider_key);
  if (it == executions_.end()) return {ProviderStatus::Kind::not_found, {}, {}};
  const Execution& execution = it->second;
  if (!execution.done) return {ProviderStatus::Kind::running, {}, {}};
  if (execution.reply.kind == ProviderReply::Kind::answered) {
    return {ProviderStatus::Kind::completed, execution.reply.output, {}};
  }
  return {ProviderStatus::Kind::failed, {}, execution.reply.reason};
}

}  // namespace onejob::sim
