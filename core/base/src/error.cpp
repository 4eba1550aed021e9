#include "dfi/base/error.h"

namespace dfi {

std::string formatError(const std::string& message, const ErrorContext& context) {
  std::string out;
  if (!context.file.empty()) out += context.file + ": ";
  if (!context.item.empty()) out += context.item + ": ";
  if (context.byteOffset) out += "at byte " + std::to_string(*context.byteOffset) + ": ";
  return out + message;
}

Error::Error(const std::string& message, ErrorContext context)
    : std::runtime_error(formatError(message, context)),
      message_(message),
      context_(std::move(context)) {}

}  // namespace dfi
