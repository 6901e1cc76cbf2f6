#pragma once

#include <string>
#include <string_view>

#include "system/events/schema.hpp"

// The certifier's events: a provider's contract check and its verdict.
namespace onejob::events {

// A provider's contract check was run and its verdict recorded.
struct CertificationRecorded {
  static constexpr std::string_view kind = "certification.recorded";
  std::string provider;
  bool passed = false;
  std::string reasons;
  template <typename Self, typename F>
  static void fields(Self& self, F&& field) {
    field("provider", self.provider);
    field("passed", self.passed);
    field("reasons", self.reasons);
  }
};

}  // namespace onejob::events
