#pragma once
// The dfi::Error hierarchy: every failure a user can cause (a corrupt file, a mismatched
// checkpoint, a bad argument) is one of these, carrying where it happened so the message
// can name the file, the tensor or field, and the byte offset.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace dfi {

struct ErrorContext {
  std::string file;    // path of the file being read or written
  std::string item;    // tensor name, config field, JSON pointer, session table...
  std::optional<std::uint64_t> byteOffset;
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorContext context = {});

  const std::string& message() const noexcept { return message_; }
  const ErrorContext& context() const noexcept { return context_; }
  // Process exit code for the CLI; each subclass has its own so scripts can tell them apart.
  virtual int exitCode() const noexcept { return 1; }

 private:
  std::string message_;
  ErrorContext context_;
};

// A file or device could not be opened, read or written (missing, permissions, disk full).
class IoError : public Error {
 public:
  using Error::Error;
  int exitCode() const noexcept override { return 3; }
};

// The bytes are not what the format says they must be (corrupt, truncated, malformed).
class FormatError : public Error {
 public:
  using Error::Error;
  int exitCode() const noexcept override { return 4; }
};

// Well-formed input that is inconsistent: a drafter that does not fit its target,
// a tensor with the wrong shape, a config with contradicting fields.
class ValidationError : public Error {
 public:
  using Error::Error;
  int exitCode() const noexcept override { return 5; }
};

// The caller asked for something unsupported or malformed (bad flag, unknown template).
class UsageError : public Error {
 public:
  using Error::Error;
  int exitCode() const noexcept override { return 2; }
};

// A run was cancelled on request; not a failure of the input.
class CancelledError : public Error {
 public:
  using Error::Error;
  int exitCode() const noexcept override { return 130; }
};

// "file: item: at byte N: message", leaving out what is unknown.
std::string formatError(const std::string& message, const ErrorContext& context);

}  // namespace dfi
