#pragma once

// Bearer-token authentication for the HTTP service. The table holds SHA-256 hashes, never the
// tokens themselves, so the file that configures it is not a secret worth stealing.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace onejob {

// SHA-256 (FIPS 180-4) of `bytes`, as 64 lowercase hex digits: what `sha256sum` prints.
std::string sha256_hex(std::string_view bytes);

struct Principal {
  std::string name;  // 1-128 chars of [A-Za-z0-9._@-]
  bool is_operator = false;
};

class TokenTable {
 public:
  // Where a token file is wrong. `line` and `column` are 1-based, columns count bytes, and point
  // at the offending field, or at the offending byte for a bad character. `message` says what
  // is wrong and what was expected; it quotes at most 40 bytes of the file and never a field
  // that may be a plain-text token.
  struct Problem {
    int line = 0;
    int column = 0;
    std::string message;
  };

  // One entry per line: `sha256:<64 lowercase hex> <principal> [operator]`, fields separated by
  // spaces or tabs. Blank lines and lines whose first non-blank byte is `#` are ignored, as are
  // trailing whitespace and CR line endings. Returns the first problem in file order; a file
  // with no entries is a valid, empty table (whether that is acceptable is the caller's call).
  // Never throws except std::bad_alloc.
  static std::variant<TokenTable, Problem> parse(std::string_view text);

  // `authorization` is the raw Authorization header value. Accepts exactly `Bearer <token>`:
  // the scheme in any case, one or more spaces, then 1-4096 bytes of visible ASCII (0x21-0x7E).
  // Anything else, or a token whose hash is not in the table, is nullopt.
  std::optional<Principal> authenticate(std::string_view authorization) const;

  std::size_t size() const { return principals_by_hash_.size(); }

 private:
  // Keyed by sha256_hex of the token.
  std::map<std::string, Principal> principals_by_hash_;
};

}  // namespace onejob
