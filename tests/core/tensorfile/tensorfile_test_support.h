#pragma once
// Test helpers: safetensors bytes built by hand (so a test can corrupt any part of them),
// scratch directories, and catching a dfi::Error to inspect where it says the problem is.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dfi::tensorfile::testing {

// 8-byte little-endian length (the real one unless `declaredLength` says otherwise), the JSON
// text as given, then the data.
inline std::string safetensorsBytes(std::string_view json, std::string_view data = {},
                                    std::optional<std::uint64_t> declaredLength = std::nullopt) {
  const std::uint64_t length = declaredLength.value_or(json.size());
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  return bytes.append(json).append(data);
}

inline std::span<const std::byte> asBytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

inline void writeFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A fresh directory under the system temp directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dfi-tensorfile-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Runs `action`, which must throw `E`, and returns the error.
template <class E, class F>
E catchError(F&& action) {
  try {
    action();
  } catch (const E& error) {
    return error;
  }
  ADD_FAILURE() << "no " << typeid(E).name() << " was thrown";
  return E("not thrown");
}

}  // namespace dfi::tensorfile::testing
