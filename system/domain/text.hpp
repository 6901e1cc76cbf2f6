#pragma once

#include <string>
#include <string_view>

namespace onejob {

// Text the store can hold (the Store port): well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF) without a NUL byte, which PostgreSQL text cannot hold.
bool storable(std::string_view text);

// `text` made storable: each NUL byte, and each byte that starts no well-formed UTF-8 sequence,
// becomes U+FFFD (the replacement character), as a reader of broken text shows it; storable text
// comes back as it is. For what the system writes down of what others said: a provider's reason,
// an output a contract violation quotes. Refusing such a write would leave the attempt where it
// was, and the same answer would be refused again on every try.
std::string storable_text(std::string_view text);

}  // namespace onejob
