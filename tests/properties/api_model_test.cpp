// Model-based test of the API (RapidCheck's rc::state): random sequences of creates, reads and
// store faults against a model of which (owner, key) holds which request. After every command the
// API's answer must be the one the model predicts.
#include <map>
#include <optional>
#include <set>
#include <string>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <rapidcheck/boost_test.h>
#include <rapidcheck/state.h>

#include "system/adapters/memory_store.hpp"
#include "system/service/api_handler.hpp"

#include "harness/sim/rng.hpp"
#include "harness/sim/sim_loop.hpp"

#include "tests/support/broken_stores.hpp"
#include "tests/support/fake_providers.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/system_fixture.hpp"

namespace onejob::test {
namespace {

// Request bodies: 0 and 1 are one request (keys reordered); 2 names another provider; 3 another
// input. `kSameAs[i]` is the class of body i.
const std::string kBodies[] = {
    R"({"operation":"classify","provider":"alpha","input":{"text":"refund please"}})",
    R"({"input":{"text":"refund please"},"operation":"classify","provider":"alpha"})",
    R"({"operation":"classify","provider":"beta","input":{"text":"refund please"}})",
    R"({"operation":"classify","provider":"alpha","input":{"text":"refund please!"}})",
};
constexpr int kSameAs[] = {0, 0, 2, 3};
const std::string kOwners[] = {"alice", "bob"};
const std::string kKeys[] = {"k1", "k2"};

struct Model {
  std::map<std::pair<int, int>, int> request_class;  // (owner, key) -> the class it holds
  bool reply_lost_next = false;
};

struct Api {
  Api()
      : store(memory),
        providers(loop),
        context{store, providers, loop, loop, events, config, random},
        handler(context) {
    for (const char* name : {"alpha", "beta"}) config.providers.push_back({.name = name});
  }
  Response send(std::string method, std::string path, std::string body, std::string owner,
                std::optional<std::string> key) {
    return run_sync(handler.handle(make_request(std::move(method), std::move(path), std::move(body),
                                                std::move(owner), std::move(key))));
  }

  sim::SimLoop loop{sim::Rng(3)};
  MemoryStore memory;
  LosingStore store;
  FakeProviders providers;
  RecordingSink events;
  SystemConfig config;
  sim::RngRandom random{sim::Rng{1}};
  SystemContext context;
  ApiHandler handler;
  std::map<std::pair<int, int>, std::int64_t> job_ids;  // as answers revealed them
  std::set<std::int64_t> seen_ids;
};

std::optional<std::int64_t> job_id(const Response& response) {
  const auto body = nlohmann::json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains("job_id")) return std::nullopt;
  return body["job_id"].get<std::int64_t>();
}

using Command = rc::state::Command<Model, Api>;

struct Create : Command {
  int owner = *rc::gen::inRange(0, 2);
  int key = *rc::gen::inRange(0, 2);
  int body = *rc::gen::inRange(0, 4);

  void apply(Model& model) const override {
    // The row commits even when its reply is lost.
    model.request_class.try_emplace({owner, key}, kSameAs[body]);
    model.reply_lost_next = false;
  }
  void run(const Model& model, Api& api) const override {
    const auto response = api.send("POST", "/jobs", kBodies[body], kOwners[owner], kKeys[key]);
    const auto id = job_id(response);
    const auto held = model.request_class.find({owner, key});
    if (model.reply_lost_next) {
      RC_ASSERT(response.status == 503);
    } else if (held == model.request_class.end()) {
      RC_ASSERT(response.status == 201);
      RC_ASSERT(id.has_value());
      RC_ASSERT(!api.seen_ids.contains(*id));  // a new job, never another's id
    } else if (held->second == kSameAs[body]) {
      RC_ASSERT(response.status == 200);
      RC_ASSERT(id.has_value());
      auto [known, first] = api.job_ids.try_emplace({owner, key}, *id);
      RC_ASSERT(known->second == *id);  // every replay names the one job
    } else {
      RC_ASSERT(response.status == 422);
      RC_ASSERT(!id.has_value());
    }
    if (id && response.status != 422) {
      api.job_ids.try_emplace({owner, key}, *id);
      api.seen_ids.insert(*id);
    }
  }
  void show(std::ostream& os) const override {
    os << "create(" << kOwners[owner] << ", " << kKeys[key] << ", body " << body << ")";
  }
};

struct Read : Command {
  int owner = *rc::gen::inRange(0, 2);
  int key = *rc::gen::inRange(0, 2);
  int reader = *rc::gen::inRange(0, 2);

  void checkPreconditions(const Model& model) const override {
    RC_PRE(model.request_class.contains({owner, key}));
  }
  void apply(Model&) const override {}
  void run(const Model&, Api& api) const override {
    const auto known = api.job_ids.find({owner, key});
    if (known == api.job_ids.end()) return;  // its id was never revealed (only lost replies)
    const auto response =
        api.send("GET", "/jobs/" + std::to_string(known->second), "", kOwners[reader], {});
    RC_ASSERT(response.status == (reader == owner ? 200 : 404));
  }
  void show(std::ostream& os) const override {
    os << "read(" << kOwners[owner] << "'s " << kKeys[key] << " as " << kOwners[reader] << ")";
  }
};

struct LoseNextReply : Command {
  void apply(Model& model) const override { model.reply_lost_next = true; }
  void run(const Model&, Api& api) const override { api.store.lose_next_reply = true; }
  void show(std::ostream& os) const override { os << "lose the next create's reply"; }
};

BOOST_AUTO_TEST_SUITE(api_model)

RC_BOOST_PROP(creates_reads_and_lost_replies_answer_as_the_model_says, ()) {
  Model model;
  Api api;
  rc::state::check(model, api, rc::state::gen::execOneOfWithArgs<Create, Read, LoseNextReply>());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace onejob::test
