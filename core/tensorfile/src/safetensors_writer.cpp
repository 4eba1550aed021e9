#include "dfi/tensorfile/safetensors_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "dfi/base/error.h"

namespace dfi::tensorfile {
namespace {

// Owns the temporary file until it has been renamed into place.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::filesystem::path& target) : target_(target.string()) {
    path_ = target_ + ".tmp.XXXXXX";
    fd_ = ::mkstemp(path_.data());
    if (fd_ < 0) fail("cannot create a temporary file next to it", 0);
  }
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }

  void write(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) fail("cannot write", offset_);
      bytes = bytes.subspan(static_cast<std::size_t>(written));
      offset_ += static_cast<std::uint64_t>(written);
    }
  }

  void commit() {
    // mkstemp creates 0600; a checkpoint is as readable as any file the user saves.
    if (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0) fail("cannot sync", offset_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("cannot close", offset_);
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail("cannot rename " + path_ + " to it", offset_);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what, std::uint64_t offset) const {
    throw IoError(what + ": " + std::strerror(errno), {.file = target_, .byteOffset = offset});
  }

  std::string target_;
  std::string path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  bool committed_ = false;
};

// The encoder owns the naming and shape rules; its errors gain the file being written.
EncodedHeader encodeNamingFile(std::span<const TensorLayout> layouts,
                               const std::map<std::string, std::string>& metadata,
                               const std::filesystem::path& file) {
  try {
    return encodeSafetensorsHeader(layouts, metadata);
  } catch (const UsageError& error) {
    throw UsageError(error.message(), {.file = file.string(), .item = error.context().item});
  }
}

}  // namespace

SafetensorsWriter::SafetensorsWriter(std::filesystem::path file) : file_(std::move(file)) {}

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                            std::span<const std::byte> data) {
  const ErrorContext where{.file = file_.string(), .item = name};
  if (finished_) throw UsageError("the file has already been written", where);
  if (names_.contains(name)) throw UsageError("tensor name used twice", where);
  const auto byteSize = tensorByteSize(dtype, shape);
  if (byteSize && *byteSize != data.size()) {
    throw UsageError(std::to_string(data.size()) + " bytes given, " + std::string(dtypeName(dtype)) +
                         " of this shape needs " + std::to_string(*byteSize),
                     where);
  }
  // Encoding a one-tensor layout now reports the encoder's rules at the add() that broke them.
  const TensorLayout layout{std::move(name), dtype, std::move(shape)};
  encodeNamingFile(std::span(&layout, 1), {}, file_);
  names_.insert(layout.name);
  tensors_.push_back({layout, std::vector<std::byte>(data.begin(), data.end())});
}

void SafetensorsWriter::setMetadata(std::string key, std::string value) {
  if (finished_) throw UsageError("the file has already been written", {.file = file_.string(), .item = key});
  encodeNamingFile({}, {{key, value}}, file_);
  metadata_[std::move(key)] = std::move(value);
}

void SafetensorsWriter::finish() {
  if (finished_) throw UsageError("the file has already been written", {.file = file_.string()});
  // Widest elements first keeps every tensor aligned to its element size (the header is padded
  // to 8 bytes); the name breaks ties so equal inputs give identical files.
  std::sort(tensors_.begin(), tensors_.end(), [](const Pending& a, const Pending& b) {
    const auto sizeA = dtypeSize(a.layout.dtype), sizeB = dtypeSize(b.layout.dtype);
    return sizeA != sizeB ? sizeA > sizeB : a.layout.name < b.layout.name;
  });
  std::vector<TensorLayout> layouts;
  for (const auto& tensor : tensors_) layouts.push_back(tensor.layout);
  const EncodedHeader header = encodeNamingFile(layouts, metadata_, file_);
  TemporaryFile out(file_);
  out.write(std::as_bytes(std::span(header.bytes)));
  for (const auto& tensor : tensors_) out.write(tensor.data);
  out.commit();
  finished_ = true;
}

}  // namespace dfi::tensorfile
