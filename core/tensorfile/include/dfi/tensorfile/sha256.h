#pragma once
// SHA-256 (through OpenSSL's libcrypto) for checkpoint identities and test comparisons.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace dfi::tensorfile {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::span<const std::byte> bytes);
  void update(std::string_view text);
  // Lower-case hex of the digest of everything fed so far; the object is then reset.
  std::string hexDigest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string sha256Hex(std::span<const std::byte> bytes);

}  // namespace dfi::tensorfile
