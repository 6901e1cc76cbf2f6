#pragma once

#include <utility>  // before Boost.Asio: 1.74's awaitable.hpp uses std::exchange unincluded

#include <exception>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "system/ports/async.hpp"

namespace onejob::sim {

// Runs `operation` on `io` until it completes and returns its value (or rethrows what it
// threw): for commands that call the system's coroutines from plain code.
template <typename T>
T complete_now(boost::asio::io_context& io, Async<T> operation) {
  std::optional<T> out;
  std::exception_ptr failed;
  boost::asio::co_spawn(io, std::move(operation), [&](std::exception_ptr e, T value) {
    failed = e;
    if (!e) out.emplace(std::move(value));
  });
  io.restart();
  io.run();
  if (failed) std::rethrow_exception(failed);
  return std::move(*out);
}

}  // namespace onejob::sim
