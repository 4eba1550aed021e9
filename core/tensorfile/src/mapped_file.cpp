#include "dfi/tensorfile/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

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

void MappedFile::releasePages(std::uint64_t offset, std::uint64_t size) const {
  if (!address_ || size == 0 || offset >= size_) return;
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = offset / page * page;
  const std::uint64_t end = std::min<std::uint64_t>(size_, offset + std::min(size, size_ - offset));
  // Pages shared with a neighbouring tensor are dropped too; that only costs a re-read.
  // The result is ignored: it is advice, and the mapping stays valid either way.
  ::madvise(static_cast<char*>(address_) + begin, end - begin, MADV_DONTNEED);
}

std::uint64_t MappedFile::residentBytes() const {
  if (!address_) return 0;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool ours = false;
  while (std::getline(smaps, line)) {
    // A mapping starts with "start-end perms ..."; its attributes follow as "Key: value kB".
    const auto dash = line.find('-');
    if (dash != std::string::npos && dash < line.find(' ')) {
      ours = std::strtoull(line.c_str(), nullptr, 16) == reinterpret_cast<std::uintptr_t>(address_);
    } else if (ours && line.starts_with("Rss:")) {
      return std::strtoull(line.c_str() + 4, nullptr, 10) * 1024;
    }
  }
  return 0;
}

MappedFile::~MappedFile() {
  if (address_) ::munmap(address_, size_);
}

}  // namespace dfi::tensorfile
