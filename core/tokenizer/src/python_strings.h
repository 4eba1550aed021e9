#pragma once
// Python's str.strip/lstrip/rstrip on UTF-8, because the chat templates are Jinja (Python)
// code: without `chars` they strip what str.isspace() accepts, which is more than ASCII.
// Internal to dfi_tokenizer.

#include <string_view>

namespace dfi::tokenizer::py {

std::string_view strip(std::string_view s);
std::string_view strip(std::string_view s, std::string_view asciiChars);
std::string_view lstrip(std::string_view s, std::string_view asciiChars);
std::string_view rstrip(std::string_view s, std::string_view asciiChars);

}  // namespace dfi::tokenizer::py
