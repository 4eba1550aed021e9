// SHA-256 against the FIPS 180-2 example digests.

#include <gtest/gtest.h>

#include "dfi/tensorfile/sha256.h"

namespace dfi::tensorfile {
namespace {

TEST(Sha256, MatchesTheStandardExamples) {
  Sha256 hash;
  EXPECT_EQ(hash.hexDigest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  hash.update("abc");
  EXPECT_EQ(hash.hexDigest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  hash.update("abcdbcdecdefdefgefghfghighij");
  hash.update("hijkijkljklmklmnlmnomnopnopq");
  EXPECT_EQ(hash.hexDigest(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1'000'000, 'a');
  EXPECT_EQ(sha256Hex(std::as_bytes(std::span(million.data(), million.size()))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace dfi::tensorfile
