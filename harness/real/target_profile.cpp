#include "harness/real/target_profile.hpp"

#include <yaml-cpp/yaml.h>

#include "harness/scenario/loader.hpp"
#include "harness/scenario/yaml_reader.hpp"

namespace onejob::real {
namespace {

using scenario::YamlMap;
using scenario::YamlReader;

// The reference's codes by meaning: what a scenario's expected statuses say.
const std::map<int, std::string>& reference_meanings() {
  static const std::map<int, std::string> meanings{{201, "created"},   {200, "replayed"},
                                                   {422, "conflict"},  {409, "in_flight"},
                                                   {404, "not_found"}, {503, "unavailable"}};
  return meanings;
}

Route read_route(const YamlReader& reader, const YAML::Node& node, const std::string& what) {
  const YamlMap map(reader, node, what, {"method", "path"});
  Route route;
  route.method = reader.string(map.require("method"), what + ".method");
  route.path = reader.string(map.require("path"), what + ".path");
  for (const char c : route.method) {
    if (c < 'A' || c > 'Z')
      reader.fail(
          map.require("method"),
          what + ".method: expected an upper-case HTTP method, found \"" + route.method + "\"");
  }
  if (route.path.empty() || route.path.front() != '/') {
    reader.fail(map.require("path"),
                what + ".path: expected a path starting with /, found \"" + route.path + "\"");
  }
  return route;
}

std::string read_pointer(const YamlReader& reader, const YAML::Node& node,
                         const std::string& what) {
  const std::string pointer = reader.string(node, what);
  if (!pointer.empty() && pointer.front() != '/') {
    reader.fail(node, what + ": expected a JSON pointer (\"\" or starting with /), found \"" +
                          pointer + "\"");
  }
  return pointer;
}

std::map<std::string, std::string> read_names(const YamlReader& reader, const YAML::Node& node,
                                              const std::string& what) {
  if (!node.IsMap()) reader.fail(node, what + ": expected a mapping of names to text");
  std::map<std::string, std::string> names;
  for (const auto& item : node) {
    const std::string name = reader.string(item.first, what + " key");
    if (!names.emplace(name, reader.string(item.second, what + "." + name)).second) {
      reader.fail(item.first, "repeated key \"" + name + "\"");
    }
  }
  return names;
}

TargetProfile read_profile(const YamlReader& reader, const YAML::Node& root) {
  const YamlMap top(
      reader, root, "profile",
      {"name", "routes", "ready_path", "idempotency_header", "replay_header", "created_location",
       "auth", "pointers", "statuses", "attempt_states", "codes", "stub_ports"});
  TargetProfile profile;
  if (auto node = top.get("name")) profile.name = reader.string(*node, "name");
  if (auto node = top.get("routes")) {
    const YamlMap routes(reader, *node, "routes", {"create", "read", "retry", "cancel"});
    if (auto r = routes.get("create")) profile.create = read_route(reader, *r, "routes.create");
    if (auto r = routes.get("read")) profile.read = read_route(reader, *r, "routes.read");
    if (auto r = routes.get("retry")) profile.retry = read_route(reader, *r, "routes.retry");
    if (auto r = routes.get("cancel")) profile.cancel = read_route(reader, *r, "routes.cancel");
  }
  if (auto node = top.get("ready_path")) profile.ready_path = reader.string(*node, "ready_path");
  if (auto node = top.get("idempotency_header")) {
    profile.key_header = reader.string(*node, "idempotency_header");
    if (profile.key_header.empty())
      reader.fail(*node, "idempotency_header: expected a header name");
  }
  if (auto node = top.get("replay_header")) {
    profile.replay_header = reader.string(*node, "replay_header");
  }
  if (auto node = top.get("created_location")) {
    profile.created_location = reader.string(*node, "created_location");
    if (!profile.created_location.empty() &&
        profile.created_location.find("{job}") == std::string::npos) {
      reader.fail(*node,
                  "created_location: expected a path naming the job as {job} (e.g. "
                  "/jobs/{job}), or \"\" for none");
    }
  }
  if (auto node = top.get("auth")) {
    const YamlMap auth(reader, *node, "auth", {"header", "prefix", "owners", "operators"});
    if (auto v = auth.get("header")) profile.auth_header = reader.string(*v, "auth.header");
    if (auto v = auth.get("prefix")) profile.auth_prefix = reader.string(*v, "auth.prefix");
    if (auto v = auth.get("owners")) profile.owners = read_names(reader, *v, "auth.owners");
    if (auto v = auth.get("operators")) {
      profile.operators = read_names(reader, *v, "auth.operators");
    }
  }
  if (auto node = top.get("pointers")) {
    const YamlMap pointers(
        reader, *node, "pointers",
        {"job_id", "status", "result", "error", "attempts", "attempt_id", "attempt_state"});
    const std::pair<const char*, std::string*> fields[] = {
        {"job_id", &profile.job_id_pointer},
        {"status", &profile.status_pointer},
        {"result", &profile.result_pointer},
        {"error", &profile.error_pointer},
        {"attempts", &profile.attempts_pointer},
        {"attempt_id", &profile.attempt_id_pointer},
        {"attempt_state", &profile.attempt_state_pointer}};
    for (const auto& [key, field] : fields) {
      if (auto v = pointers.get(key))
        *field = read_pointer(reader, *v, std::string("pointers.") + key);
    }
  }
  if (auto node = top.get("statuses")) {
    const YamlMap statuses(reader, *node, "statuses", {"succeeded", "failed"});
    for (const char* meaning : {"succeeded", "failed"}) {
      if (auto v = statuses.get(meaning)) {
        profile.status_words[reader.string(*v, std::string("statuses.") + meaning)] = meaning;
      }
    }
  }
  if (auto node = top.get("attempt_states")) {
    const YamlMap states(reader, *node, "attempt_states", {"starting", "cancelled", "live"});
    if (auto v = states.get("live")) {
      if (!v->IsSequence()) reader.fail(*v, "attempt_states.live: expected a list of words");
      profile.live_attempt_words.clear();
      for (const auto& word : *v) {
        profile.live_attempt_words.insert(reader.string(word, "attempt_states.live"));
      }
    }
    for (const char* meaning : {"starting", "cancelled"}) {
      if (auto v = states.get(meaning)) {
        std::erase_if(profile.attempt_state_words,
                      [&](const auto& word) { return word.second == meaning; });
        profile.attempt_state_words[reader.string(*v, std::string("attempt_states.") + meaning)] =
            meaning;
      }
    }
  }
  if (auto node = top.get("codes")) {
    const YamlMap codes(
        reader, *node, "codes",
        {"created", "replayed", "conflict", "in_flight", "not_found", "unavailable"});
    for (auto& [meaning, code] : profile.codes) {
      if (auto v = codes.get(meaning)) {
        // A reused key is refused with a client error (B2 judges refusals by it).
        const bool refusal = meaning == "conflict";
        code =
            reader.small_integer(*v, "codes." + meaning, refusal ? 400 : 100, refusal ? 499 : 599);
      }
    }
  }
  if (auto node = top.get("stub_ports")) {
    if (!node->IsMap())
      reader.fail(*node, "stub_ports: expected a mapping of provider names to ports");
    for (const auto& item : *node) {
      const std::string provider = reader.string(item.first, "stub_ports key");
      profile.stub_ports[provider] = static_cast<unsigned short>(
          reader.small_integer(item.second, "stub_ports." + provider, 0, 65535));
    }
  }
  return profile;
}

}  // namespace

int TargetProfile::translate(int reference_status) const {
  const auto meaning = reference_meanings().find(reference_status);
  if (meaning == reference_meanings().end()) return reference_status;
  const auto code = codes.find(meaning->second);
  return code == codes.end() ? reference_status : code->second;
}

std::string TargetProfile::status_of(const std::string& word) const {
  const auto found = status_words.find(word);
  return found == status_words.end() ? word : found->second;
}

std::string TargetProfile::attempt_state_of(const std::string& word) const {
  const auto found = attempt_state_words.find(word);
  return found == attempt_state_words.end() ? word : found->second;
}

TargetProfile parse_profile(const std::string& yaml_text, const std::string& file) {
  const YAML::Node document = scenario::parse_yaml_document(yaml_text, file, "profile");
  const YamlReader reader(file);
  try {
    return read_profile(reader, document);
  } catch (const YAML::Exception& error) {
    throw scenario::ScenarioError(file, {error.mark.line + 1, error.mark.column + 1}, error.msg);
  }
}

TargetProfile load_profile_file(const std::string& path) {
  return parse_profile(scenario::read_yaml_file(path), path);
}

}  // namespace onejob::real
