#include "system/service/tokens.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "system/domain/check.hpp"

namespace onejob {
namespace {

// ---- SHA-256 ---------------------------------------------------------------------------------

using Sha256State = std::array<std::uint32_t, 8>;

constexpr Sha256State kSha256Initial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::array<std::uint32_t, 64> kSha256Rounds = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::size_t kSha256BlockBytes = 64;

void sha256_compress(Sha256State& state, const char* block) {
  std::array<std::uint32_t, 64> w;
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      w[i] = (w[i] << 8) | static_cast<unsigned char>(block[4 * i + k]);
    }
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t s1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const std::uint32_t choice = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + s1 + choice + kSha256Rounds[i] + w[i];
    const std::uint32_t s0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const std::uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + s0 + majority;
  }
  const Sha256State mixed = {a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < state.size(); ++i) state[i] += mixed[i];
}

// ---- Token file ------------------------------------------------------------------------------

using Problem = TokenTable::Problem;

constexpr std::size_t kMaxLineBytes = 1024;
constexpr std::size_t kMaxPrincipalChars = 128;
constexpr std::size_t kMaxTokenChars = 4096;
constexpr std::size_t kMaxQuotedBytes = 40;
constexpr std::string_view kHashPrefix = "sha256:";
constexpr std::string_view kEntryFormat = "`sha256:<64 lowercase hex> <principal> [operator]`";
// `printf %s $TOKEN | sha256sum` with TOKEN unset hashes nothing: an entry no request can match.
constexpr std::string_view kEmptyStringHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct Field {
  std::string_view text;
  int column = 0;
};

struct Entry {
  std::string hash;
  Principal principal;
  int column = 0;  // of the hash field, for a duplicate
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool is_visible_ascii(char c) { return c >= '!' && c <= '~'; }

bool is_principal_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '@' || c == '-';
}

// A file's bytes in a message: bounded, and unprintable bytes escaped so the message stays one
// clean line in a log.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text.substr(0, kMaxQuotedBytes)) {
    if ((c == ' ' || is_visible_ascii(c)) && c != '"' && c != '\\') {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    }
  }
  if (text.size() > kMaxQuotedBytes) out += "...";
  return out + "\"";
}

Problem problem_at(int line, std::size_t column, std::string message) {
  return Problem{line, static_cast<int>(column), std::move(message)};
}

// Fields and their 1-based columns; stops after four, which is already one too many.
std::vector<Field> split_fields(std::string_view line) {
  std::vector<Field> fields;
  std::size_t at = 0;
  while (fields.size() < 4) {
    while (at < line.size() && is_blank(line[at])) ++at;
    if (at == line.size()) break;
    const std::size_t start = at;
    while (at < line.size() && !is_blank(line[at])) ++at;
    fields.push_back({line.substr(start, at - start), static_cast<int>(start + 1)});
  }
  return fields;
}

// The hash field. Never quotes it: a field without the prefix may be a live token.
std::optional<Problem> check_hash(int line, const Field& field) {
  if (!field.text.starts_with(kHashPrefix)) {
    return problem_at(line, field.column,
                      "expected `sha256:` and a token's hash: tokens are stored hashed, never in "
                      "plain text; hash one with `printf %s TOKEN | sha256sum`");
  }
  const std::string_view hex = field.text.substr(kHashPrefix.size());
  const std::size_t hex_column = field.column + kHashPrefix.size();
  for (std::size_t i = 0; i < hex.size(); ++i) {
    if (!is_hex_digit(hex[i])) {
      return problem_at(line, hex_column + i,
                        "hash has " + quoted(hex.substr(i, 1)) +
                            ", expected only lowercase hex digits (0-9, a-f) as sha256sum prints");
    }
  }
  if (hex.size() != 64) {
    return problem_at(line, hex_column,
                      "hash has " + std::to_string(hex.size()) +
                          " hex digits, expected 64 (a SHA-256, as sha256sum prints)");
  }
  if (hex == kEmptyStringHash) {
    return problem_at(line, hex_column,
                      "hash is the SHA-256 of the empty string, which no request can present; "
                      "was TOKEN empty when it was hashed?");
  }
  return std::nullopt;
}

std::optional<Problem> check_principal(int line, const Field& field) {
  if (field.text.size() > kMaxPrincipalChars) {
    return problem_at(line, field.column,
                      "principal is " + std::to_string(field.text.size()) +
                          " characters long, expected 1 to 128");
  }
  for (std::size_t i = 0; i < field.text.size(); ++i) {
    if (!is_principal_char(field.text[i])) {
      return problem_at(line, field.column + i,
                        "principal has " + quoted(field.text.substr(i, 1)) +
                            ", expected only letters, digits and . _ @ -");
    }
  }
  return std::nullopt;
}

// One line, without its '\n'. An Entry, nothing (blank or comment), or what is wrong with it.
std::variant<std::monostate, Entry, Problem> parse_line(int line, std::string_view text) {
  if (text.ends_with('\r')) text.remove_suffix(1);
  if (text.size() > kMaxLineBytes) {
    return problem_at(line, kMaxLineBytes + 1,
                      "line is " + std::to_string(text.size()) +
                          " bytes long, expected at most 1024 (one entry " +
                          std::string(kEntryFormat) + ")");
  }
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return problem_at(line, nul + 1, "NUL byte, expected text (is this a token file?)");
  }
  while (!text.empty() && (is_blank(text.back()) || text.back() == '\r')) text.remove_suffix(1);
  const std::vector<Field> fields = split_fields(text);
  if (fields.empty() || fields[0].text.starts_with('#')) return std::monostate{};

  if (auto problem = check_hash(line, fields[0])) return *std::move(problem);
  if (fields.size() < 2) {
    return problem_at(line, fields[0].column + fields[0].text.size(),
                      "missing principal after the hash, expected " + std::string(kEntryFormat));
  }
  if (auto problem = check_principal(line, fields[1])) return *std::move(problem);
  if (fields.size() >= 3 && fields[2].text != "operator") {
    return problem_at(line, fields[2].column,
                      "unknown flag " + quoted(fields[2].text) +
                          ", expected `operator` or nothing after the principal");
  }
  if (fields.size() >= 4) {
    return problem_at(line, fields[3].column,
                      "unexpected field " + quoted(fields[3].text) + ", expected " +
                          std::string(kEntryFormat) + " and nothing more");
  }
  return Entry{std::string(fields[0].text.substr(kHashPrefix.size())),
               Principal{std::string(fields[1].text), fields.size() == 3}, fields[0].column};
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256State state = kSha256Initial;
  const std::size_t whole = bytes.size() - bytes.size() % kSha256BlockBytes;
  for (std::size_t at = 0; at < whole; at += kSha256BlockBytes) {
    sha256_compress(state, bytes.data() + at);
  }
  // The rest of the input, the 0x80 end marker and the 64-bit big-endian length in bits: one
  // block, or two when fewer than 9 bytes are free after the rest.
  std::array<char, 2 * kSha256BlockBytes> tail{};
  const std::string_view rest = bytes.substr(whole);
  rest.copy(tail.data(), rest.size());
  tail[rest.size()] = static_cast<char>(0x80);
  const std::size_t tail_size =
      rest.size() + 9 <= kSha256BlockBytes ? kSha256BlockBytes : 2 * kSha256BlockBytes;
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[tail_size - 1 - i] = static_cast<char>(bits >> (8 * i));
  }
  for (std::size_t at = 0; at < tail_size; at += kSha256BlockBytes) {
    sha256_compress(state, tail.data() + at);
  }

  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (const std::uint32_t word : state) {
    for (int shift = 28; shift >= 0; shift -= 4) hex += kHex[(word >> shift) & 0xf];
  }
  ONEJOB_ASSERT(hex.size() == 64, "a SHA-256 is 64 hex digits");
  return hex;
}

std::variant<TokenTable, TokenTable::Problem> TokenTable::parse(std::string_view text) {
  TokenTable table;
  std::map<std::string, int> line_by_hash;
  int line = 1;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto parsed = parse_line(line, text.substr(start, end - start));
    start = end + 1;
    if (auto* problem = std::get_if<Problem>(&parsed)) return std::move(*problem);
    auto* entry = std::get_if<Entry>(&parsed);
    if (entry == nullptr) continue;
    if (auto [first, fresh] = line_by_hash.emplace(entry->hash, line); !fresh) {
      return Problem{line, entry->column,
                     "the same token hash is already on line " + std::to_string(first->second) +
                         ", expected each token once"};
    }
    table.principals_by_hash_.emplace(std::move(entry->hash), std::move(entry->principal));
  }
  return table;
}

std::optional<Principal> TokenTable::authenticate(std::string_view authorization) const {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) {
      return std::nullopt;
    }
  }
  const std::string_view after_scheme = authorization.substr(kScheme.size());
  const std::size_t spaces = after_scheme.find_first_not_of(' ');
  if (spaces == 0 || spaces == std::string_view::npos) return std::nullopt;
  const std::string_view token = after_scheme.substr(spaces);
  if (token.size() > kMaxTokenChars) return std::nullopt;
  for (char c : token) {
    if (!is_visible_ascii(c)) return std::nullopt;
  }
  // The map compares hashes, so its timing can reveal at most how much of a stored hash the
  // presented token's hash shares, which does not help anyone guess a token.
  const auto found = principals_by_hash_.find(sha256_hex(token));
  if (found == principals_by_hash_.end()) return std::nullopt;
  return found->second;
}

}  // namespace onejob
