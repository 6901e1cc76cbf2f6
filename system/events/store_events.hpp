#pragma once

#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// What a durable store reports about itself outside its calls' results.
namespace onejob::events {

// The database server said something outside a reply: a WARNING a statement raised, or the
// FATAL it sends an idle connection before closing it. `store` names the adapter.
struct StoreNotice {
  static constexpr std::string_view kind = "store.notice";
  std::string store;
  std::string text;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("store", self.store);
    field("text", self.text);
  }
};

}  // namespace onejob::events
