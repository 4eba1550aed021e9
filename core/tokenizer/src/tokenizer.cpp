#include "dfi/tokenizer/tokenizer.h"

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/tokenizer/byte_level.h"
#include "dfi/base/utf8.h"
#include "nfc.h"
#include "tokenizer_impl.h"

namespace dfi::tokenizer {
namespace {

using detail::TokenizerSpec;

// HF's ByteLevel decoder: a token whose every character is a byte-level symbol stands for
// those bytes; any other token (an added token such as "<|im_start|>" with a plain space, say)
// stands for its own UTF-8 text.
std::string decodedBytes(const std::string& token) {
  std::string out;
  std::size_t pos = 0;
  while (pos < token.size()) {
    const auto byte = codePointToByte(utf8::nextCodePoint(token, pos));
    if (!byte) return token;
    out.push_back(static_cast<char>(*byte));
  }
  return out;
}

[[noreturn]] void invalid(const std::filesystem::path& source, const std::string& item, const std::string& what) {
  throw ValidationError(what, {.file = source.string(), .item = item});
}

// HF tokenizers does not take an added token's id from the file: loading gives the token the
// id its content already has (as an added token or in the vocabulary), else the next id after
// the vocabulary (counted in entries) and the added ids so far. Files written by HF agree with
// this; for any other file, following the rule keeps the ids HF would produce.
std::vector<std::int32_t> assignAddedIds(const TokenizerSpec& spec,
                                         const std::unordered_map<std::string, std::int32_t>& vocabIds,
                                         const std::filesystem::path& source) {
  const auto vocabCount = static_cast<std::int32_t>(spec.vocab.size());
  std::unordered_map<std::string, std::int32_t> assigned;
  std::optional<std::int32_t> maxAssigned;
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < spec.addedTokens.size(); ++i) {
    const auto& added = spec.addedTokens[i];
    std::int32_t id;
    if (const auto a = assigned.find(added.content); a != assigned.end()) {
      id = a->second;
    } else if (const auto v = vocabIds.find(added.content); v != vocabIds.end()) {
      id = v->second;
    } else {
      id = maxAssigned && *maxAssigned >= vocabCount ? *maxAssigned + 1 : vocabCount;
    }
    if (id != added.id)
      logger("tokenizer")->warn("{}: /added_tokens/{}: \"{}\" has id {} in the file but {} when loaded, as in HF tokenizers",
                                source.string(), i, added.content, added.id, id);
    assigned.emplace(added.content, id);
    maxAssigned = std::max(maxAssigned.value_or(id), id);
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

Tokenizer::Impl::Impl(TokenizerSpec spec, const std::filesystem::path& source)
    : splitter(spec.splitRegex, source, "/pre_tokenizer/pretokenizers/0/pattern/Regex"), nfc(spec.nfc) {
  std::int32_t maxId = -1;
  for (const auto& [token, id] : spec.vocab) maxId = std::max(maxId, id);
  auto size = static_cast<std::size_t>(maxId + 1);
  kinds.assign(size, Kind::Unused);
  bytes.resize(size);
  addedContent.resize(size);

  vocabIds.reserve(spec.vocab.size());
  for (auto& [token, id] : spec.vocab) {
    if (kinds[id] != Kind::Unused) invalid(source, "/model/vocab/" + token, "id " + std::to_string(id) + " is used twice");
    kinds[id] = Kind::Vocab;
    bytes[id] = decodedBytes(token);
    vocabIds.emplace(std::move(token), id);
  }

  std::array<std::int32_t, 256> byteIds{};
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    utf8::appendCodePoint(byteToCodePoint(static_cast<std::uint8_t>(b)), symbol);
    const auto it = vocabIds.find(symbol);
    if (it == vocabIds.end())
      invalid(source, "/model/vocab", "the byte-level symbol \"" + symbol + "\" for byte " + std::to_string(b) + " is missing");
    byteIds[b] = it->second;
  }

  detail::MergeTable merges(spec.merges.size());
  for (std::size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    const std::string item = "/model/merges/" + std::to_string(rank);
    const auto l = vocabIds.find(left), r = vocabIds.find(right), m = vocabIds.find(left + right);
    if (l == vocabIds.end()) invalid(source, item, "merge part \"" + left + "\" is not in the vocabulary");
    if (r == vocabIds.end()) invalid(source, item, "merge part \"" + right + "\" is not in the vocabulary");
    if (m == vocabIds.end()) invalid(source, item, "merged token \"" + left + right + "\" is not in the vocabulary");
    merges.insertOrAssign(l->second, r->second, {static_cast<std::int32_t>(rank), m->second});
  }

  const std::vector<std::int32_t> addedTokenIds = assignAddedIds(spec, vocabIds, source);
  for (const std::int32_t id : addedTokenIds) size = std::max(size, static_cast<std::size_t>(id) + 1);
  kinds.resize(size, Kind::Unused);
  bytes.resize(size);
  addedContent.resize(size);
  // An added token whose id a vocabulary entry also has wins, as in HF's id_to_token.
  for (std::size_t i = 0; i < spec.addedTokens.size(); ++i) {
    const auto& added = spec.addedTokens[i];
    const std::int32_t id = addedTokenIds[i];
    kinds[id] = added.special ? Kind::Special : Kind::Added;
    bytes[id] = decodedBytes(added.content);
    addedContent[id] = added.content;
    addedMatcher.add(added.content, id);
    addedIds[added.content] = id;
  }
  bpe = std::make_unique<detail::Bpe>(byteIds, std::move(merges), spec.ignoreMerges ? &vocabIds : nullptr);
}

Tokenizer Tokenizer::fromFile(const std::filesystem::path& tokenizerJson) {
  auto impl = std::make_shared<Impl>(detail::readTokenizerJson(tokenizerJson), tokenizerJson);
  logger("tokenizer")->debug("loaded {}: {} ids, {} added tokens", tokenizerJson.string(), impl->kinds.size(),
                             impl->addedIds.size());
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::fromDirectory(const std::filesystem::path& dir) {
  const auto json = dir / "tokenizer.json";
  auto impl = std::make_shared<Impl>(detail::readTokenizerJson(json), json);
  try {
    impl->chatTemplate = findChatTemplate(dir);
  } catch (const UsageError&) {
    impl->chatTemplateError = std::current_exception();
  }
  return Tokenizer(std::move(impl));
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
  if (const auto bad = utf8::firstInvalidByte(text))
    throw FormatError("text is not valid UTF-8", {.item = "text", .byteOffset = *bad});
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::string normalized;
  auto encodeSegment = [&](std::string_view segment) {
    if (segment.empty()) return;
    const std::string_view input = impl_->nfc ? detail::toNfc(segment, normalized) : segment;
    impl_->splitter.split(input, [&](std::string_view piece) { impl_->bpe->encodePiece(piece, ids); });
  };
  std::size_t pos = 0;
  while (const auto match = impl_->addedMatcher.findNext(text, pos)) {
    encodeSegment(text.substr(pos, match->begin - pos));
    ids.push_back(match->id);
    pos = match->begin + match->length;
  }
  encodeSegment(text.substr(pos));
  return ids;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skipSpecial) const {
  std::string raw;
  for (const std::int32_t id : ids) {
    if (!impl_->known(id) || (skipSpecial && impl_->kinds[id] == Impl::Kind::Special)) continue;
    raw += impl_->bytes[id];
  }
  return utf8::decodeLossy(raw);
}

std::string Tokenizer::tokenText(std::int32_t id) const { return impl_->known(id) ? impl_->bytes[id] : std::string(); }

bool Tokenizer::isSpecial(std::int32_t id) const { return impl_->known(id) && impl_->kinds[id] == Impl::Kind::Special; }

bool Tokenizer::isAdded(std::int32_t id) const {
  return impl_->known(id) && (impl_->kinds[id] == Impl::Kind::Added || impl_->kinds[id] == Impl::Kind::Special);
}

std::optional<std::int32_t> Tokenizer::tokenId(std::string_view content) const {
  const std::string key(content);
  if (const auto it = impl_->addedIds.find(key); it != impl_->addedIds.end()) return it->second;
  if (const auto it = impl_->vocabIds.find(key); it != impl_->vocabIds.end()) return it->second;
  return std::nullopt;
}

std::size_t Tokenizer::vocabSize() const { return impl_->kinds.size(); }

std::optional<ChatTemplateKind> Tokenizer::chatTemplate() const {
  if (impl_->chatTemplateError) std::rethrow_exception(impl_->chatTemplateError);
  return impl_->chatTemplate;
}

}  // namespace dfi::tokenizer
