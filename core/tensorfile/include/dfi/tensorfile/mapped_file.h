#pragma once
// A read-only, private memory mapping of a whole file. Pages load lazily on first touch, so
// mapping a checkpoint costs address space, not memory; views into it never copy.
// If another process truncates the file while it is mapped, touching the lost pages raises
// SIGBUS: checkpoints must not be rewritten in place while they are open.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace dfi::tensorfile {

class MappedFile {
 public:
  // Throws dfi::IoError naming the file if it cannot be opened, stat'ed or mapped.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& file);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::filesystem::path& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(address_), size_}; }

  // Drops the pages overlapping [offset, offset + size) from this process's resident set
  // (madvise MADV_DONTNEED). The bytes stay readable: the next access maps them again from the
  // file. Loaders call it after copying a tensor out, so that streaming a checkpoint never
  // keeps more than the tensor in flight resident.
  void releasePages(std::uint64_t offset, std::uint64_t size) const;
  // Bytes of this mapping resident in this process (Rss in /proc/self/smaps; 0 if unknown).
  std::uint64_t residentBytes() const;

 private:
  MappedFile(std::filesystem::path path, void* address, std::size_t size)
      : path_(std::move(path)), address_(address), size_(size) {}

  std::filesystem::path path_;
  void* address_;  // nullptr for an empty file (mmap refuses length 0)
  std::size_t size_;
};

}  // namespace dfi::tensorfile
