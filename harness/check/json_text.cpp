#include "harness/check/json_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace onejob::check {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t point) {
  if (point < 0x80) {
    out += static_cast<char>(point);
  } else if (point < 0x800) {
    out += static_cast<char>(0xC0 | (point >> 6));
    out += static_cast<char>(0x80 | (point & 0x3F));
  } else if (point < 0x10000) {
    out += static_cast<char>(0xE0 | (point >> 12));
    out += static_cast<char>(0x80 | ((point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (point >> 18));
    out += static_cast<char>(0x80 | ((point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (point & 0x3F));
  }
}

// One pass over the text with a stack of the arrays and objects still open (no recursion: a
// hostile body may nest a million deep).
class Scanner {
 public:
  // `open` and `keys` lend their room (emptied first): a thread's scans reuse theirs.
  Scanner(std::string_view text, std::vector<std::size_t>& open,
          std::vector<std::string_view>& keys)
      : text_(text), open_(open), keys_(keys) {
    open_.clear();
    keys_.clear();
  }

  JsonTextScan run() {
    JsonTextScan scan;
    scan.valid = scan_value_sequence();
    scan.repeated_key = repeated_;
    return scan;
  }

 private:
  // What open_ holds for an open array; an open object holds where its keys start in keys_ (its
  // keys so far are the last ones there, after those of the objects around it).
  static constexpr std::size_t kArray = SIZE_MAX;

  bool at_end() const { return at_ >= text_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(text_[at_]); }
  void skip_space() {
    while (!at_end() && is_json_whitespace(text_[at_])) ++at_;
  }

  bool scan_value_sequence() {
    // A byte-order mark may open the text, and only whole.
    if (!text_.empty() && peek() == 0xEF) {
      if (text_.substr(0, 3) != "\xEF\xBB\xBF") return false;
      at_ = 3;
    }
    bool want_value = true;
    for (;;) {
      if (want_value) {
        skip_space();
        if (at_end()) return false;
        const char c = text_[at_];
        if (c == '{' || c == '[') {
          ++at_;
          skip_space();
          if (!at_end() && text_[at_] == (c == '{' ? '}' : ']')) {
            ++at_;  // empty: a whole value
          } else if (c == '[') {
            open_.push_back(kArray);
            continue;
          } else {
            open_.push_back(keys_.size());
            if (!member_key()) return false;
            continue;
          }
        } else if (c == '"') {
          if (!string(nullptr)) return false;
        } else if (c == 't') {
          if (!literal("true")) return false;
        } else if (c == 'f') {
          if (!literal("false")) return false;
        } else if (c == 'n') {
          if (!literal("null")) return false;
        } else if (c == '-' || is_digit(c)) {
          if (!number()) return false;
        } else {
          return false;
        }
      }
      // A value ended: what may follow it in the innermost open container, or the end.
      skip_space();
      // nlohmann reads a NUL byte outside a string as the end of its input.
      if (open_.empty()) return at_end() || text_[at_] == '\0';
      if (at_end()) return false;
      const char c = text_[at_++];
      const bool object = open_.back() != kArray;
      if (c == ',') {
        if (object && !member_key()) return false;
        want_value = true;
      } else if (c == (object ? '}' : ']')) {
        if (object) close_object(open_.back());
        open_.pop_back();
        want_value = false;
      } else {
        return false;
      }
    }
  }

  // A member's key and its colon, the value to follow.
  bool member_key() {
    skip_space();
    if (at_end() || text_[at_] != '"') return false;
    std::string_view key;
    if (!string(&key)) return false;
    keys_.push_back(key);
    skip_space();
    if (at_end() || text_[at_] != ':') return false;
    ++at_;
    return true;
  }

  void close_object(std::size_t keys_from) {
    const auto first = keys_.begin() + static_cast<std::ptrdiff_t>(keys_from);
    if (keys_.end() - first > 1) {
      std::sort(first, keys_.end());
      repeated_ = repeated_ || std::adjacent_find(first, keys_.end()) != keys_.end();
    }
    keys_.erase(first, keys_.end());
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  // A number token (json_number_token), and a double's range: a number with a fraction or an
  // exponent, or too long for a 64-bit integer, is read as a double and must be finite.
  bool number() {
    const auto token = json_number_token(text_.substr(at_));
    if (token.length == 0) return false;
    const std::size_t start = at_;
    at_ += token.length;
    if (token.integral && token.length <= 18) return true;
    const std::string text(text_.substr(start, token.length));
    return std::isfinite(std::strtod(text.c_str(), nullptr));
  }

  // A well-formed UTF-8 sequence led by the byte at at_ (>= 0x80): no overlong form, no
  // surrogate, nothing past U+10FFFF.
  bool utf8_sequence() {
    const unsigned char lead = peek();
    std::size_t tail = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      tail = 1;
    } else if (lead == 0xE0) {
      tail = 2;
      low = 0xA0;
    } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
      tail = 2;
    } else if (lead == 0xED) {
      tail = 2;
      high = 0x9F;
    } else if (lead == 0xF0) {
      tail = 3;
      low = 0x90;
    } else if (lead >= 0xF1 && lead <= 0xF3) {
      tail = 3;
    } else if (lead == 0xF4) {
      tail = 3;
      high = 0x8F;
    } else {
      return false;
    }
    if (text_.size() - at_ <= tail) return false;
    for (std::size_t i = 1; i <= tail; ++i) {
      const auto byte = static_cast<unsigned char>(text_[at_ + i]);
      if (byte < (i == 1 ? low : 0x80) || byte > (i == 1 ? high : 0xBF)) return false;
    }
    at_ += tail + 1;
    return true;
  }

  // Four hex digits at at_, as a number.
  bool hex4(std::uint32_t& value) {
    if (text_.size() - at_ < 4) return false;
    value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = hex_digit(text_[at_++]);
      if (digit < 0) return false;
      value = (value << 4) | static_cast<std::uint32_t>(digit);
    }
    return true;
  }

  // A string at at_ (its opening quote). With `key`, its decoded bytes: a view of the text when
  // it has no escape, else of a decoded copy kept while the scan lasts.
  bool string(std::string_view* key) {
    const std::size_t start = ++at_;
    std::string* decoded = nullptr;  // made at the first escape, when the key is wanted
    std::size_t copied = start;      // the text before this is in `decoded`
    for (;;) {
      while (!at_end()) {
        const unsigned char c = peek();
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
        ++at_;
      }
      if (at_end()) return false;
      const unsigned char c = peek();
      if (c == '"') {
        if (key != nullptr) {
          if (decoded == nullptr) {
            *key = text_.substr(start, at_ - start);
          } else {
            decoded->append(text_.substr(copied, at_ - copied));
            *key = *decoded;
          }
        }
        ++at_;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        if (!utf8_sequence()) return false;
        continue;
      }
      // An escape.
      if (key != nullptr) {
        if (decoded == nullptr)
          decoded = decoded_.emplace_back(std::make_unique<std::string>()).get();
        decoded->append(text_.substr(copied, at_ - copied));
      }
      ++at_;
      if (at_end()) return false;
      const char escape = text_[at_++];
      std::uint32_t point = 0;
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          point = static_cast<unsigned char>(escape);
          break;
        case 'b':
          point = '\b';
          break;
        case 'f':
          point = '\f';
          break;
        case 'n':
          point = '\n';
          break;
        case 'r':
          point = '\r';
          break;
        case 't':
          point = '\t';
          break;
        case 'u': {
          if (!hex4(point)) return false;
          if (point >= 0xDC00 && point <= 0xDFFF) return false;  // a low surrogate alone
          if (point >= 0xD800 && point <= 0xDBFF) {
            std::uint32_t low = 0;
            if (text_.substr(at_, 2) != "\\u") return false;
            at_ += 2;
            if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
            point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00);
          }
          break;
        }
        default:
          return false;
      }
      if (decoded != nullptr) append_utf8(*decoded, point);
      copied = at_;
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::vector<std::size_t>& open_;       // the arrays and objects open, innermost last
  std::vector<std::string_view>& keys_;  // the keys of the objects open, outermost first
  std::vector<std::unique_ptr<std::string>> decoded_;  // keys with escapes, decoded (views stay)
  bool repeated_ = false;
};

}  // namespace

JsonNumberToken json_number_token(std::string_view text) {
  std::size_t at = 0;
  const auto digits = [&text, &at] {
    const std::size_t from = at;
    while (at < text.size() && is_digit(text[at])) ++at;
    return at - from;
  };
  if (at < text.size() && text[at] == '-') ++at;
  if (at == text.size() || !is_digit(text[at])) return {};
  if (text[at] == '0') {
    ++at;
  } else {
    digits();
  }
  JsonNumberToken token;
  if (at < text.size() && text[at] == '.') {
    ++at;
    if (digits() == 0) return {};
    token.integral = false;
  }
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    if (digits() == 0) return {};
    token.integral = false;
  }
  token.length = at;
  return token;
}

JsonTextScan scan_json_text(std::string_view text) {
  thread_local std::vector<std::size_t> open;
  thread_local std::vector<std::string_view> keys;
  return Scanner(text, open, keys).run();
}

}  // namespace onejob::check
