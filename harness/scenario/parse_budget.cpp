// The global operator new and delete, replaced to honour AllocationBudget. Outside a budget they
// are malloc and free, as the library's are.
#include "harness/scenario/parse_budget.hpp"

#include <cstdlib>
#include <new>

namespace onejob::scenario {
namespace {

// Bytes this thread may still allocate; null when no budget is in scope.
thread_local std::size_t* remaining = nullptr;
thread_local std::size_t budget_bytes = 0;

}  // namespace

AllocationBudget::AllocationBudget(std::size_t bytes) {
  budget_bytes = bytes;
  remaining = &budget_bytes;
}

AllocationBudget::~AllocationBudget() { remaining = nullptr; }

}  // namespace onejob::scenario

void* operator new(std::size_t size) {
  if (auto* left = onejob::scenario::remaining) {
    if (size > *left) throw std::bad_alloc();
    *left -= size;
  }
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}

void* operator new[](std::size_t size) { return ::operator new(size); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }

// The nothrow forms too, so no allocation bypasses the budget or pairs one library's new with
// another's delete (sanitizer runtimes bring their own).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return ::operator new(size, std::nothrow);
}
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
