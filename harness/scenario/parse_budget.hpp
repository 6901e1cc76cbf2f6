#pragma once

#include <cstddef>

namespace onejob::scenario {

// While one is in scope, the bytes this thread allocates with operator new are counted, and an
// allocation past `bytes` throws std::bad_alloc. The YAML parser runs under one: yaml-cpp 0.7
// allocates without bound on some malformed inputs (libFuzzer found several), and a scenario
// file must never take the process's memory. Budgets do not nest.
class AllocationBudget {
 public:
  explicit AllocationBudget(std::size_t bytes);
  ~AllocationBudget();
  AllocationBudget(const AllocationBudget&) = delete;
  AllocationBudget& operator=(const AllocationBudget&) = delete;
};

}  // namespace onejob::scenario
