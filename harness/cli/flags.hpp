#pragma once

// What every onejob command shares: how a command plugs into the command line, the checks its
// flags use, and the one way to refuse bad input.

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli/exit_codes.hpp"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace onejob::cli {

// A command added to the command line: its subcommand, and what runs it once its flags are
// parsed (the flags live in the closure).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Bad input (a file, a flag, a path): prints "onejob: " and the parts on stderr, a line, and
// returns the exit code for it. `return bad_input("--jobs: expected 1 to 256, found ", jobs);`
template <typename... Parts>
int bad_input(const Parts&... parts) {
  std::cerr << "onejob: ";
  (std::cerr << ... << parts);
  std::cerr << "\n";
  return kExitBadInput;
}

// Flag checks: unsigned 64-bit numbers exactly as written (no sign, no overflow clamped), the
// same above 0, and a non-empty path.
const CLI::Validator& unsigned64();
const CLI::Validator& positive64();
// An unsigned decimal integer from `least` to `most` (the error names the range and the text).
CLI::Validator integer_from_to(std::uint64_t least, std::uint64_t most);
const CLI::Validator& non_empty_path();

// --defect NAME on the commands that run the system (run, replay, fuzz).
void add_defect_option(CLI::App& command, std::vector<std::string>& names);
// --report-dir DIR (a non-empty path; its default shown in --help), saying what goes there.
void add_report_dir_option(CLI::App& command, std::string& dir, const std::string& what);

// For the commands that simulate (run, replay, fuzz, selftest, bench): they free and allocate
// the same memory run after run, and glibc's default hands the top of the heap back to the
// kernel as soon as 128 KB of it is free, so the next run faults it in again page by page (in a
// fuzz campaign, page faults were 7% of the CPU and 90,000 per 10,000 cases). Keeps up to
// 512 MB of freed memory in the process instead, and grows the heap 64 MB at a time. (When the
// executable links tcmalloc, cmake/OnejobAllocator.cmake, these settings of glibc's malloc go
// unused: tcmalloc keeps freed spans in its page heap and returns them to the kernel slowly.)
void keep_freed_memory();

}  // namespace onejob::cli
