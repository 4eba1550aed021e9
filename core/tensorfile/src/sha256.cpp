#include "dfi/tensorfile/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace dfi::tensorfile {

struct Sha256::State {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context{EVP_MD_CTX_new(), &EVP_MD_CTX_free};

  void reset() {
    // Only allocation failure can make these fail; that is not a user error.
    if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("OpenSSL SHA-256 initialisation failed");
  }
};

Sha256::Sha256() : state_(std::make_unique<State>()) { state_->reset(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const std::byte> bytes) {
  if (EVP_DigestUpdate(state_->context.get(), bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("OpenSSL SHA-256 update failed");
}

void Sha256::update(std::string_view text) { update(std::as_bytes(std::span(text.data(), text.size()))); }

std::string Sha256::hexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(state_->context.get(), digest, &length) != 1)
    throw std::runtime_error("OpenSSL SHA-256 final failed");
  state_->reset();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xF];
  }
  return hex;
}

std::string sha256Hex(std::span<const std::byte> bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hexDigest();
}

}  // namespace dfi::tensorfile
