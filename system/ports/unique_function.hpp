#pragma once

#include <utility>

#include <cstddef>
#include <new>
#include <type_traits>

namespace onejob {

// A move-only `void()` callable. Asio completion handlers (those that resume a coroutine among
// them) are move-only, so std::function cannot hold them.
//
// A callable of up to kInline bytes that moves without throwing is kept inside the object, so
// queueing one costs no allocation: the simulator queues one per event (a timer's completion, a
// message's delivery), and most fit. (An Asio completion that resumes a coroutine, 72 bytes with
// its executor, is boxed: kept inline it cost more to move than to allocate.)
class UniqueFunction {
 public:
  static constexpr std::size_t kInline = 48;

  UniqueFunction() = default;

  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, UniqueFunction>)
      UniqueFunction(F f)  // NOLINT(google-explicit-constructor): used like std::function
  {
    if constexpr (fits_inline<F>()) {
      impl_ = ::new (static_cast<void*>(&storage_)) Inline<F>(std::move(f));
    } else {
      impl_ = new Boxed<F>(std::move(f));
    }
  }

  UniqueFunction(UniqueFunction&& other) noexcept { take(other); }
  UniqueFunction& operator=(UniqueFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  UniqueFunction(const UniqueFunction&) = delete;
  UniqueFunction& operator=(const UniqueFunction&) = delete;
  ~UniqueFunction() { reset(); }

  void operator()() { impl_->call(); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void call() = 0;
    // Moves this callable into `storage` (inline ones) or hands over the box (boxed ones);
    // returns the callable's new address. This one is then destroyed by the caller, or, for a
    // box, simply forgotten.
    virtual Base* move_to(void* storage) noexcept = 0;
    virtual void destroy() noexcept = 0;
  };
  template <typename F>
  struct Inline final : Base {
    explicit Inline(F f) : fn(std::move(f)) {}
    void call() override { fn(); }
    Base* move_to(void* storage) noexcept override {
      Base* moved = ::new (storage) Inline(std::move(fn));
      this->~Inline();
      return moved;
    }
    void destroy() noexcept override { this->~Inline(); }
    F fn;
  };
  template <typename F>
  struct Boxed final : Base {
    explicit Boxed(F f) : fn(std::move(f)) {}
    void call() override { fn(); }
    Base* move_to(void*) noexcept override { return this; }
    void destroy() noexcept override { delete this; }
    F fn;
  };
  template <typename F>
  static constexpr bool fits_inline() {
    return sizeof(Inline<F>) <= sizeof(Storage) && alignof(Inline<F>) <= alignof(Storage) &&
           std::is_nothrow_move_constructible_v<F>;
  }

  void take(UniqueFunction& other) noexcept {
    if (other.impl_ != nullptr) impl_ = other.impl_->move_to(&storage_);
    other.impl_ = nullptr;
  }
  void reset() noexcept {
    if (impl_ != nullptr) impl_->destroy();
    impl_ = nullptr;
  }

  // One vtable pointer and the callable.
  struct Storage {
    alignas(std::max_align_t) std::byte bytes[kInline + sizeof(void*)];
  };
  Base* impl_ = nullptr;
  Storage storage_;
};

}  // namespace onejob
