// libFuzzer target: any bytes as a scenario file. The loader must answer every input with a
// spec or a ScenarioError (file:line:col, exit 2 for the CLI); anything else (a crash, another
// exception, a sanitizer report, unbounded time or memory) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/scenario/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // A generated load of up to 1,000 jobs: the largest allowed (a million) takes seconds to
    // expand under ASan, past the fuzzer's time bound per input.
    onejob::scenario::parse_scenario(text, "fuzz.yaml", 1'000);
  } catch (const onejob::scenario::ScenarioError&) {
    // Bad input, reported: the expected outcome for most inputs.
  }
  return 0;
}
