#pragma once
// UTF-8 well-formedness check shared by the header parser and the writer: safetensors headers
// must be UTF-8, and a name we write must come back unchanged from every reader.

#include <cstddef>
#include <optional>
#include <string_view>

namespace dfi::tensorfile::detail {

// Offset of the first byte of the first ill-formed sequence (overlong forms, surrogates and
// code points above U+10FFFF are ill-formed, as in RFC 3629), or nullopt when all is well.
std::optional<std::size_t> findInvalidUtf8(std::string_view text);

}  // namespace dfi::tensorfile::detail
