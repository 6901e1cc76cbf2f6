#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace onejob {

// Every port operation that may wait (on a database, a network, a timer) is an Asio awaitable,
// so the same service code runs on a real io_context and under the deterministic simulator.
//
// g++ 12 miscompiles two kinds of temporaries inside a co_await expression: an aggregate built
// in place (`co_await store.insert_job(NewJob{...})` destroys it twice) and a braced list for a
// std::vector parameter ("array used as initializer"). Build such values as locals first.
//
// Every such coroutine runs on an io_context (the simulator's or a real node's), so its executor
// is the io_context's own, not Asio's type-erased any_io_executor: a coroutine's executor moves
// with every wait it makes, and a type-erased move cost a fifth of a simulated sleep.
using AsyncExecutor = boost::asio::io_context::executor_type;
template <typename T>
using Async = boost::asio::awaitable<T, AsyncExecutor>;
// The completion token that makes an Asio operation an Async: use it where Asio's examples say
// boost::asio::use_awaitable.
using UseAsync = boost::asio::use_awaitable_t<AsyncExecutor>;
inline constexpr UseAsync use_async{};

}  // namespace onejob
