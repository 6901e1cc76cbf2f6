#include "harness/check/i14_keys.hpp"

#include "harness/check/invariant.hpp"

namespace onejob::check::i14 {

std::string describe(const ReportKey& key, const Texts& texts) {
  using Kind = ReportKey::Kind;
  switch (key.kind) {
    case Kind::job_created:
      return "job.created of " + job_ref(key.id);
    case Kind::attempt_created:
      return "attempt.created of " + attempt_ref(key.id);
    case Kind::transition:
      return "attempt.state of " + attempt_ref(key.id) + " " + std::string(to_string(key.from)) +
             " -> " + std::string(to_string(key.to));
    case Kind::cas:
      return "job.cas of " + attempt_ref(key.id);
    case Kind::job_failed:
      return "job.failed of " + job_ref(key.id);
    case Kind::certification:
      return "certification.recorded of " + texts.text(key.text) +
             (key.passed ? " (passed)" : " (failed)");
    case Kind::write_refused:
      return "attempt.write_refused of " + attempt_ref(key.id);
    case Kind::provider_reply:
      return "provider.reply " + texts.text(key.text) + " for " + attempt_ref(key.id);
    case Kind::status:
      // A status answer is reported whatever it said: one that arrives after the query's own
      // timeout is reported as "unreachable", and the trace does not say when the query was sent.
      return "reconciler.status for " + attempt_ref(key.id);
    case Kind::store_error:
      return "a store error (worker.store_error or reconciler.store_error)";
  }
  return {};
}

}  // namespace onejob::check::i14
