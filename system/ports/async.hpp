#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio/awaitable.hpp>

namespace onejob {

// Every port operation that may wait (on a database, a network, a timer) is an Asio awaitable,
// so the same service code runs on a real io_context and under the deterministic simulator.
//
// g++ 12 miscompiles two kinds of temporaries inside a co_await expression: an aggregate built
// in place (`co_await store.insert_job(NewJob{...})` destroys it twice) and a braced list for a
// std::vector parameter ("array used as initializer"). Build such values as locals first.
template <typename T>
using Async = boost::asio::awaitable<T>;

}  // namespace onejob
