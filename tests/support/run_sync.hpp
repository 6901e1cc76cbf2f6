#pragma once

#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "system/ports/async.hpp"

namespace onejob::test {

// Runs one awaitable to completion on a private io_context and returns its value (or rethrows).
template <typename T>
T run_sync(Async<T> operation) {
  boost::asio::io_context io;
  auto future = boost::asio::co_spawn(io, std::move(operation), boost::asio::use_future);
  io.run();
  return future.get();
}

}  // namespace onejob::test
