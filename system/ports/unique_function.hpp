#pragma once

#include <utility>

#include <memory>
#include <type_traits>

namespace onejob {

// A move-only `void()` callable. Asio completion handlers (those that resume a coroutine among
// them) are move-only, so std::function cannot hold them.
class UniqueFunction {
 public:
  UniqueFunction() = default;

  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, UniqueFunction>)
      UniqueFunction(F f)  // NOLINT(google-explicit-constructor): used like std::function
      : impl_(std::make_unique<Impl<F>>(std::move(f))) {}

  void operator()() { impl_->call(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void call() = 0;
  };
  template <typename F>
  struct Impl final : Base {
    explicit Impl(F f) : fn(std::move(f)) {}
    void call() override { fn(); }
    F fn;
  };

  std::unique_ptr<Base> impl_;
};

}  // namespace onejob
