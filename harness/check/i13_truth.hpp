#pragma once

#include <utility>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/check/api_routes.hpp"
#include "harness/check/invariant.hpp"

// What I13 judges an answer's claims about a job by: the store's commit log while the API node
// handled the request (i13_truth.cpp).
namespace onejob::check::i13 {

// How many API answers each client send got: (request, send) -> count.
using AnswerCounts = std::map<std::pair<std::int64_t, std::int64_t>, int>;

// What a refusal's reason (a 409's, or a retry's 422 provider_not_certified) claims that was untrue
// while the API node handled the request ("" when nothing).
std::string untrue_refusal(const HistoryModel& model, const ApiExchange& exchange,
                           const events::ApiResponse& answer);
// What a job read's shape gets wrong, as the client read the body ("" when nothing): the job_id
// of the job its `route` (the client's request line) names, a result exactly when it shows
// succeeded, a non-empty failure reason exactly when it shows failed.
std::string read_shape(const events::ClientSent& sent, const Route& route,
                       const events::ClientReceived& got);
// A 200 job read against the commit log over its exchange: the status, "blocked" and attempts it
// shows (I13.read_misstates), judged for a send only one API node answered.
void check_read(const HistoryModel& model, const ApiExchange& exchange,
                const events::ApiResponse& answer, const AnswerCounts& answers,
                std::vector<Violation>& out);
// A create's 200 or 201 shows a status its job had while the create was handled
// (I13.create_misstates), judged for a send only one API node answered.
void check_create_answer(const HistoryModel& model, const ApiExchange& exchange,
                         const events::ApiResponse& answer, const AnswerCounts& answers,
                         std::vector<Violation>& out);

}  // namespace onejob::check::i13
