#include "dfi/tensorfile/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dfi/base/error.h"

namespace dfi::tensorfile {
namespace {

[[noreturn]] void throwErrno(const std::string& what, const std::filesystem::path& file) {
  throw IoError(what + ": " + std::strerror(errno), {.file = file.string()});
}

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& file) {
  const FileDescriptor descriptor{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
  if (descriptor.fd < 0) throwErrno("cannot open", file);
  struct stat status {};
  if (::fstat(descriptor.fd, &status) != 0) throwErrno("cannot stat", file);
  if (!S_ISREG(status.st_mode)) throw IoError("not a regular file", {.file = file.string()});
  const auto size = static_cast<std::size_t>(status.st_size);
  void* address = nullptr;
  if (size > 0) {
    address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, descriptor.fd, 0);
    if (address == MAP_FAILED) throwErrno("cannot map", file);
  }
  return std::shared_ptr<const MappedFile>(new MappedFile(file, address, size));
}

MappedFile::~MappedFile() {
  if (address_) ::munmap(address_, size_);
}

}  // namespace dfi::tensorfile
