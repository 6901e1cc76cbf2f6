#include "harness/check/invariant.hpp"

#include "harness/check/i1_one_job_per_key.hpp"

namespace onejob::check {

const std::vector<Invariant>& all_invariants() {
  static const std::vector<Invariant> invariants = {
      {"I1", "one job per (owner, key); every accepted create with that pair returns its id",
       check_one_job_per_key},
  };
  return invariants;
}

const Invariant* find_invariant(std::string_view id) {
  for (const auto& invariant : all_invariants()) {
    if (invariant.id == id) return &invariant;
  }
  return nullptr;
}

}  // namespace onejob::check
