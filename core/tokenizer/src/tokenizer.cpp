#include "dfi/tokenizer/tokenizer.h"

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/tokenizer/byte_level.h"
#include "dfi/base/utf8.h"
#include "tiktoken_layout.h"
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
                                         const detail::TokenIds& vocabIds,
                                         const std::filesystem::path& source) {
  const auto vocabCount = static_cast<std::int32_t>(spec.model.vocab.size());
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

// tiktoken layouts number their specials themselves.
std::vector<std::int32_t> givenIds(const TokenizerSpec& spec) {
  std::vector<std::int32_t> ids;
  for (const auto& added : spec.addedTokens) ids.push_back(added.id);
  return ids;
}

// The merge table of a tokenizer.json: its merges in rank order, pairs of vocabulary spellings.
detail::MergeTable listedMerges(const TokenizerSpec& spec, const detail::TokenIds& vocabIds, const std::filesystem::path& source) {
  const auto& merges = spec.model.merges;
  detail::MergeTable table(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const std::string item = "/model/merges/" + std::to_string(rank);
    const auto l = vocabIds.find(left), r = vocabIds.find(right), m = vocabIds.find(left + right);
    if (l == vocabIds.end()) invalid(source, item, "merge part \"" + left + "\" is not in the vocabulary");
    if (r == vocabIds.end()) invalid(source, item, "merge part \"" + right + "\" is not in the vocabulary");
    if (m == vocabIds.end()) invalid(source, item, "merged token \"" + left + right + "\" is not in the vocabulary");
    table.insertOrAssign(l->second, r->second, {static_cast<std::int32_t>(rank), m->second});
  }
  return table;
}

// tiktoken's merges, implied by its ranks: adjacent parts a, b merge when a+b is a token, the
// pair whose token has the lowest rank first. Every split of every token into two tokens is
// such a pair. (transformers' TikTokenConverter lists the same pairs in the same order.)
detail::MergeTable rankMerges(const std::vector<std::string>& bytes, const std::vector<Tokenizer::Impl::Kind>& kinds) {
  detail::TokenIds byBytes;
  byBytes.reserve(bytes.size());
  for (std::size_t id = 0; id < bytes.size(); ++id)
    if (kinds[id] == Tokenizer::Impl::Kind::Vocab) byBytes.emplace(bytes[id], static_cast<std::int32_t>(id));
  detail::MergeTable table(bytes.size() * 2);
  for (std::size_t id = 0; id < bytes.size(); ++id) {
    if (kinds[id] != Tokenizer::Impl::Kind::Vocab) continue;
    const std::string_view token = bytes[id];
    for (std::size_t cut = 1; cut < token.size(); ++cut) {
      const auto l = byBytes.find(token.substr(0, cut));
      if (l == byBytes.end()) continue;
      const auto r = byBytes.find(token.substr(cut));
      if (r == byBytes.end()) continue;
      table.insertOrAssign(l->second, r->second, {static_cast<std::int32_t>(id), static_cast<std::int32_t>(id)});
    }
  }
  return table;
}

std::string hexByteToken(int byte) {
  static const char* digits = "0123456789ABCDEF";
  return std::string("<0x") + digits[byte >> 4] + digits[byte & 15] + ">";
}

}  // namespace

Tokenizer::Impl::Impl(TokenizerSpec spec, const std::filesystem::path& source)
    : byteLevel(spec.byteLevel()),
      normalizer(spec.normalizer),
      preTokenizer(spec.preTokenizer, source),
      decoder(spec.decoder) {
  const detail::ModelSpec& model = spec.model;
  std::int32_t maxId = -1;
  for (const auto& [token, id] : model.vocab) maxId = std::max(maxId, id);
  auto size = static_cast<std::size_t>(maxId + 1);
  auto resize = [&] {
    kinds.resize(size, Kind::Unused);
    bytes.resize(size);
    addedContent.resize(size);
    if (!byteLevel) strings.resize(size);
  };
  resize();

  vocabIds.reserve(model.vocab.size());
  for (const auto& [token, id] : model.vocab) {
    if (kinds[id] != Kind::Unused) invalid(source, "/model/vocab/" + token, "id " + std::to_string(id) + " is used twice");
    kinds[id] = Kind::Vocab;
    if (byteLevel) {
      bytes[id] = decodedBytes(token);
    } else {
      bytes[id] = decoder.tokenText(token);
      strings[id] = token;
    }
    vocabIds.emplace(token, id);
  }

  detail::BpeOptions options{.alphabet = byteLevel ? detail::BpeOptions::Alphabet::Bytes : detail::BpeOptions::Alphabet::Characters,
                             .byteFallback = model.byteFallback,
                             .fuseUnk = model.fuseUnk,
                             .ignoreMerges = model.ignoreMerges};
  for (int b = 0; b < 256; ++b) {
    if (byteLevel) {
      std::string symbol;
      utf8::appendCodePoint(byteToCodePoint(static_cast<std::uint8_t>(b)), symbol);
      const auto it = vocabIds.find(symbol);
      if (it == vocabIds.end())
        invalid(source, "/model/vocab", "the byte-level symbol \"" + symbol + "\" for byte " + std::to_string(b) + " is missing");
      options.byteIds[b] = it->second;
    } else {
      // The <0xNN> spelling HF's byte fallback looks up (Rust's format "<{:#04X}>").
      const auto it = vocabIds.find(hexByteToken(b));
      options.byteIds[b] = it == vocabIds.end() ? -1 : it->second;
    }
  }
  if (model.unkToken) {
    const auto it = vocabIds.find(*model.unkToken);
    if (it == vocabIds.end()) invalid(source, "/model/unk_token", "\"" + *model.unkToken + "\" is not in the vocabulary");
    options.unkId = it->second;
  }
  detail::MergeTable merges = model.mergeSource == detail::ModelSpec::Merges::Ranks ? rankMerges(bytes, kinds)
                                                                                     : listedMerges(spec, vocabIds, source);

  const std::vector<std::int32_t> addedTokenIds = spec.addedIdsAsGiven ? givenIds(spec) : assignAddedIds(spec, vocabIds, source);
  for (const std::int32_t id : addedTokenIds) size = std::max(size, static_cast<std::size_t>(id) + 1);
  resize();
  // An added token whose id a vocabulary entry also has wins, as in HF's id_to_token. Where two
  // specials share an id (o200k_harmony), both encode to it and the first one names it.
  for (std::size_t i = 0; i < spec.addedTokens.size(); ++i) {
    const auto& added = spec.addedTokens[i];
    const std::int32_t id = addedTokenIds[i];
    addedMatcher.add(added.content, id);
    addedIds.emplace(added.content, id);
    if (spec.addedIdsAsGiven && (kinds[id] == Kind::Added || kinds[id] == Kind::Special)) continue;
    kinds[id] = added.special ? Kind::Special : Kind::Added;
    if (byteLevel) {
      bytes[id] = decodedBytes(added.content);
    } else {
      bytes[id] = decoder.tokenText(added.content);
      strings[id] = added.content;
    }
    addedContent[id] = added.content;
  }
  bpe = std::make_unique<detail::Bpe>(options, std::move(merges), vocabIds);
}

Tokenizer Tokenizer::fromFile(const std::filesystem::path& tokenizerJson) {
  auto impl = std::make_shared<Impl>(detail::readTokenizerJson(tokenizerJson), tokenizerJson);
  logger("tokenizer")->debug("loaded {}: {} ids, {} added tokens", tokenizerJson.string(), impl->kinds.size(),
                             impl->addedIds.size());
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::fromDirectory(const std::filesystem::path& dir) {
  const auto json = dir / "tokenizer.json";
  std::shared_ptr<Impl> impl;
  std::error_code ec;
  if (std::filesystem::exists(json, ec)) {
    impl = std::make_shared<Impl>(detail::readTokenizerJson(json), json);
  } else if (const auto rankFile = detail::findTiktokenFile(dir)) {
    impl = std::make_shared<Impl>(detail::readTiktokenDirectory(dir, *rankFile), *rankFile);
    logger("tokenizer")->debug("loaded {}: {} ids, {} added tokens", rankFile->string(), impl->kinds.size(), impl->addedIds.size());
  } else {
    impl = std::make_shared<Impl>(detail::readTokenizerJson(json), json);  // throws: no tokenizer.json
  }
  try {
    impl->chatTemplate = ChatTemplate::find(dir);
  } catch (const Error&) {
    impl->chatTemplateError = std::current_exception();
  }
  return Tokenizer(std::move(impl));
}

std::optional<Tokenizer> Tokenizer::inDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir / "tokenizer.json", ec) && !detail::findTiktokenFile(dir)) return std::nullopt;
  return fromDirectory(dir);
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
  if (const auto bad = utf8::firstInvalidByte(text))
    throw FormatError("text is not valid UTF-8", {.item = "text", .byteOffset = *bad});
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::string normalized;
  // Each stretch between added tokens is normalized and split on its own, as in HF.
  auto encodeSegment = [&](std::string_view segment, bool atInputStart) {
    if (segment.empty()) return;
    const std::string_view input = impl_->normalizer.apply(segment, normalized);
    impl_->preTokenizer.split(input, atInputStart, [&](std::string_view piece) { impl_->bpe->encodePiece(piece, ids); });
  };
  std::size_t pos = 0;
  while (const auto match = impl_->addedMatcher.findNext(text, pos)) {
    encodeSegment(text.substr(pos, match->begin - pos), pos == 0);
    ids.push_back(match->id);
    pos = match->begin + match->length;
  }
  encodeSegment(text.substr(pos), pos == 0);
  return ids;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skipSpecial) const {
  std::string out;
  if (impl_->byteLevel) {
    // The ByteLevel decoder is bytes then UTF-8: one lossy pass over all of them is the same.
    std::string raw;
    for (const std::int32_t id : ids) {
      if (!impl_->known(id) || (skipSpecial && impl_->kinds[id] == Impl::Kind::Special)) continue;
      raw += impl_->bytes[id];
    }
    return utf8::decodeLossy(raw);
  }
  auto state = impl_->decoder.start();
  for (const std::int32_t id : ids) {
    if (!impl_->known(id) || (skipSpecial && impl_->kinds[id] == Impl::Kind::Special)) continue;
    impl_->decoder.feed(state, impl_->decoderInput(id), out);
  }
  impl_->decoder.finish(state, out);
  return out;
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

const std::optional<ChatTemplate>& Tokenizer::chatTemplate() const {
  if (impl_->chatTemplateError) std::rethrow_exception(impl_->chatTemplateError);
  return impl_->chatTemplate;
}

}  // namespace dfi::tokenizer
