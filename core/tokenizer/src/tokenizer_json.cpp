#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/utf8.h"
#include "read_file.h"
#include "tokenizer_json_sax.h"
#include "tokenizer_spec.h"

namespace dfi::tokenizer::detail {
namespace {

using nlohmann::json;

// Reading state: the file (for messages) and helpers that name the JSON pointer on failure.
class Reader {
 public:
  explicit Reader(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void unsupported(const std::string& pointer, const std::string& what) const {
    throw ValidationError(what, {.file = path_.string(), .item = pointer});
  }

  const json& member(const json& object, const std::string& pointer, const char* key) const {
    if (!object.is_object()) unsupported(pointer, "expected a JSON object");
    const auto it = object.find(key);
    if (it == object.end()) unsupported(pointer + "/" + key, "missing field");
    return *it;
  }

  const std::string& string(const json& value, const std::string& pointer) const {
    if (!value.is_string()) unsupported(pointer, "expected a string, found " + std::string(value.type_name()));
    return value.get_ref<const std::string&>();
  }

  // Optional flags must be absent, null or have the value this tokenizer implements.
  void requireFlag(const json& object, const std::string& pointer, const char* key, bool expected) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return;
    if (!it->is_boolean() || it->get<bool>() != expected)
      unsupported(pointer + "/" + key, std::string("only ") + (expected ? "true" : "false") + " is supported, found " + it->dump());
  }

  void requireNullOrEmpty(const json& object, const std::string& pointer, const char* key) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null() || (it->is_string() && it->get_ref<const std::string&>().empty())) return;
    unsupported(pointer + "/" + key, "only null or \"\" is supported, found " + it->dump());
  }

  const std::string& type(const json& object, const std::string& pointer) const {
    return string(member(object, pointer, "type"), pointer + "/type");
  }

  void requireType(const json& object, const std::string& pointer, const char* expected) const {
    if (type(object, pointer) != expected)
      unsupported(pointer + "/type", std::string("expected \"") + expected + "\", found \"" + type(object, pointer) + "\"");
  }

 private:
  std::filesystem::path path_;
};

// A "Sequence" of steps (nested ones flattened) or one step: calls onStep(step, pointer) for each.
template <class F>
void forEachStep(const Reader& r, const json& value, const std::string& pointer, const char* listKey, const F& onStep) {
  if (r.type(value, pointer) != "Sequence") return onStep(value, pointer);
  const json& steps = r.member(value, pointer, listKey);
  if (!steps.is_array()) r.unsupported(pointer + "/" + listKey, "expected an array");
  for (std::size_t i = 0; i < steps.size(); ++i)
    forEachStep(r, steps[i], pointer + "/" + listKey + "/" + std::to_string(i), listKey, onStep);
}

// A {"String": s} pattern; regex patterns are supported only where a Split takes them.
const std::string& literalPattern(const Reader& r, const json& step, const std::string& pointer) {
  const json& pattern = r.member(step, pointer, "pattern");
  if (!pattern.is_object() || !pattern.contains("String"))
    r.unsupported(pointer + "/pattern", "only a {\"String\": ...} pattern is supported here, found " + pattern.dump());
  return r.string(pattern["String"], pointer + "/pattern/String");
}

// The one character Metaspace and Strip work with.
std::string oneCharacter(const Reader& r, const json& step, const std::string& pointer, const char* key) {
  const std::string& s = r.string(r.member(step, pointer, key), pointer + "/" + key);
  std::size_t pos = 0;
  if (!s.empty()) utf8::nextCodePoint(s, pos);
  if (s.empty() || pos != s.size()) r.unsupported(pointer + "/" + key, "expected one character, found \"" + s + "\"");
  return s;
}

// A regex matching `literal` as is: PCRE reads a backslash before any ASCII punctuation or
// space as that character.
std::string regexForLiteral(std::string_view literal) {
  std::string out;
  for (const char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

// Metaspace's prepend_scheme, or in files older than tokenizers 0.19 its add_prefix_space.
PrependScheme prependScheme(const Reader& r, const json& step, const std::string& pointer) {
  if (const auto it = step.find("prepend_scheme"); it != step.end() && !it->is_null()) {
    const std::string& s = r.string(*it, pointer + "/prepend_scheme");
    if (s == "always") return PrependScheme::Always;
    if (s == "first") return PrependScheme::First;
    if (s == "never") return PrependScheme::Never;
    r.unsupported(pointer + "/prepend_scheme", "expected \"always\", \"first\" or \"never\", found \"" + s + "\"");
  }
  if (const auto it = step.find("add_prefix_space"); it != step.end() && it->is_boolean())
    return it->get<bool>() ? PrependScheme::Always : PrependScheme::Never;
  return PrependScheme::Always;
}

void readNormalizer(const Reader& r, const json& root, TokenizerSpec& spec) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) return;
  forEachStep(r, *it, "/normalizer", "normalizers", [&](const json& step, const std::string& ptr) {
    const std::string& type = r.type(step, ptr);
    if (type == "NFC") {
      spec.normalizer.push_back({.kind = NormalizerStep::Kind::Nfc});
    } else if (type == "Replace") {
      spec.normalizer.push_back({.kind = NormalizerStep::Kind::Replace, .pattern = literalPattern(r, step, ptr),
                                 .content = r.string(r.member(step, ptr, "content"), ptr + "/content")});
      if (spec.normalizer.back().pattern.empty()) r.unsupported(ptr + "/pattern/String", "an empty pattern is not supported");
    } else if (type == "Prepend") {
      spec.normalizer.push_back({.kind = NormalizerStep::Kind::Prepend,
                                 .content = r.string(r.member(step, ptr, "prepend"), ptr + "/prepend")});
    } else {
      r.unsupported(ptr + "/type", "normalizer \"" + type + "\" is not supported (NFC, Replace, Prepend and Sequence are)");
    }
  });
}

// Split(regex, Isolated) steps then ByteLevel last (Qwen, Llama 3, gpt-oss); or Metaspace
// (SentencePiece-style); or Split(" ", MergedWithPrevious), a no-op after Gemma's normalizer has
// put "▁" for every space; or none at all.
void readPreTokenizer(const Reader& r, const json& root, TokenizerSpec& spec) {
  const auto it = root.find("pre_tokenizer");
  if (it == root.end() || it->is_null()) return;
  forEachStep(r, *it, "/pre_tokenizer", "pretokenizers", [&](const json& step, const std::string& ptr) {
    if (spec.byteLevel()) r.unsupported(ptr, "no pre-tokenizer step may follow ByteLevel");
    const std::string& type = r.type(step, ptr);
    if (type == "Split") {
      const json& pattern = r.member(step, ptr, "pattern");
      PreTokenizerStep split{.kind = PreTokenizerStep::Kind::Split};
      if (pattern.is_object() && pattern.contains("Regex")) {
        split.pattern = r.string(pattern["Regex"], ptr + "/pattern/Regex");
        split.field = ptr + "/pattern/Regex";
      } else if (pattern.is_object() && pattern.contains("String")) {
        split.pattern = regexForLiteral(r.string(pattern["String"], ptr + "/pattern/String"));
        split.field = ptr + "/pattern/String";
      } else {
        r.unsupported(ptr + "/pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
      }
      const std::string& behavior = r.string(r.member(step, ptr, "behavior"), ptr + "/behavior");
      static const std::pair<const char*, SplitBehavior> kBehaviors[] = {
          {"Isolated", SplitBehavior::Isolated}, {"Removed", SplitBehavior::Removed},
          {"MergedWithPrevious", SplitBehavior::MergedWithPrevious}, {"MergedWithNext", SplitBehavior::MergedWithNext},
          {"Contiguous", SplitBehavior::Contiguous}};
      const auto known = std::find_if(std::begin(kBehaviors), std::end(kBehaviors), [&](const auto& b) { return behavior == b.first; });
      if (known == std::end(kBehaviors))
        r.unsupported(ptr + "/behavior", "expected Isolated, Removed, MergedWithPrevious, MergedWithNext or Contiguous, found \"" + behavior + "\"");
      split.behavior = known->second;
      if (const auto inv = step.find("invert"); inv != step.end() && inv->is_boolean()) split.invert = inv->get<bool>();
      spec.preTokenizer.push_back(std::move(split));
    } else if (type == "ByteLevel") {
      r.requireFlag(step, ptr, "add_prefix_space", false);
      r.requireFlag(step, ptr, "use_regex", false);
      spec.preTokenizer.push_back({.kind = PreTokenizerStep::Kind::ByteLevel});
    } else if (type == "Metaspace") {
      PreTokenizerStep meta{.kind = PreTokenizerStep::Kind::Metaspace, .field = ptr};
      meta.replacement = oneCharacter(r, step, ptr, "replacement");
      meta.prependScheme = prependScheme(r, step, ptr);
      if (const auto s = step.find("split"); s != step.end() && s->is_boolean()) meta.split = s->get<bool>();
      spec.preTokenizer.push_back(std::move(meta));
    } else {
      r.unsupported(ptr + "/type", "pre-tokenizer \"" + type + "\" is not supported (Split, ByteLevel, Metaspace and Sequence are)");
    }
  });
}

void readDecoder(const Reader& r, const json& root, TokenizerSpec& spec) {
  const json& decoder = r.member(root, "", "decoder");
  if (decoder.is_null()) r.unsupported("/decoder", "a tokenizer without a decoder is not supported");
  bool fused = false;
  forEachStep(r, decoder, "/decoder", "decoders", [&](const json& step, const std::string& ptr) {
    const std::string& type = r.type(step, ptr);
    // After Fuse the steps see the whole text as one token; only those that can work on it as
    // it streams are supported there (see decoder_chain.h).
    auto notAfterFuse = [&] { if (fused) r.unsupported(ptr + "/type", "\"" + type + "\" after Fuse is not supported"); };
    DecoderStep d;
    if (type == "ByteLevel") {
      d.kind = DecoderStep::Kind::ByteLevel;
    } else if (type == "Replace") {
      d.kind = DecoderStep::Kind::Replace;
      d.pattern = literalPattern(r, step, ptr);
      d.content = r.string(r.member(step, ptr, "content"), ptr + "/content");
      if (d.pattern.empty()) r.unsupported(ptr + "/pattern/String", "an empty pattern is not supported");
      std::size_t pos = 0;
      utf8::nextCodePoint(d.pattern, pos);
      if (fused && pos != d.pattern.size()) r.unsupported(ptr + "/pattern/String", "after Fuse only a one-character pattern is supported");
    } else if (type == "ByteFallback") {
      notAfterFuse();
      d.kind = DecoderStep::Kind::ByteFallback;
    } else if (type == "Fuse") {
      d.kind = DecoderStep::Kind::Fuse;
      fused = true;
    } else if (type == "Strip") {
      d.kind = DecoderStep::Kind::Strip;
      d.content = oneCharacter(r, step, ptr, "content");
      const json& start = r.member(step, ptr, "start");
      const json& stop = r.member(step, ptr, "stop");
      if (!start.is_number_unsigned()) r.unsupported(ptr + "/start", "expected a non-negative integer");
      if (!stop.is_number_integer() || stop.get<std::int64_t>() != 0)
        r.unsupported(ptr + "/stop", "only 0 is supported (stripping the end of the text), found " + stop.dump());
      d.start = start.get<std::size_t>();
    } else if (type == "Metaspace") {
      notAfterFuse();
      d.kind = DecoderStep::Kind::Metaspace;
      d.replacement = oneCharacter(r, step, ptr, "replacement");
      d.prependScheme = prependScheme(r, step, ptr);
    } else {
      r.unsupported(ptr + "/type", "decoder \"" + type + "\" is not supported (ByteLevel, Replace, ByteFallback, Fuse, "
                                   "Strip, Metaspace and Sequence are)");
    }
    spec.decoder.push_back(std::move(d));
  });
  // Byte-level symbols are only ever turned back into bytes by the ByteLevel decoder, and that
  // decoder only makes sense on byte-level symbols.
  const bool byteLevelDecoder = spec.decoder.size() == 1 && spec.decoder[0].kind == DecoderStep::Kind::ByteLevel;
  const bool anyByteLevel = std::any_of(spec.decoder.begin(), spec.decoder.end(),
                                        [](const DecoderStep& d) { return d.kind == DecoderStep::Kind::ByteLevel; });
  if (spec.byteLevel() && !byteLevelDecoder)
    r.unsupported("/decoder", "a ByteLevel pre-tokenizer needs the ByteLevel decoder alone");
  if (!spec.byteLevel() && anyByteLevel)
    r.unsupported("/decoder", "the ByteLevel decoder needs a ByteLevel pre-tokenizer as the last pre-tokenizer step");
}

// A post-processor only acts when special tokens are added around a sequence, which encode()
// never does (it is HF's encode(text, add_special_tokens=False)); ByteLevel only adjusts offsets.
void readPostProcessor(const Reader& r, const json& root) {
  if (const auto it = root.find("post_processor"); it != root.end() && !it->is_null()) {
    forEachStep(r, *it, "/post_processor", "processors", [&](const json& step, const std::string& ptr) {
      const std::string& type = r.type(step, ptr);
      if (type != "ByteLevel" && type != "TemplateProcessing")
        r.unsupported(ptr + "/type", "post-processor \"" + type + "\" is not supported (ByteLevel, TemplateProcessing and Sequence are)");
    });
  }
  for (const char* key : {"truncation", "padding"}) {
    const auto it = root.find(key);
    if (it != root.end() && !it->is_null()) r.unsupported(std::string("/") + key, "only null is supported");
  }
}

void readModel(const Reader& r, StreamedTokenizerJson& file, TokenizerSpec& spec) {
  const json& model = r.member(file.rest, "", "model");
  r.requireType(model, "/model", "BPE");
  if (const auto it = model.find("dropout"); it != model.end() && !it->is_null())
    r.unsupported("/model/dropout", "only null is supported (dropout makes encoding random)");
  r.requireNullOrEmpty(model, "/model", "continuing_subword_prefix");
  r.requireNullOrEmpty(model, "/model", "end_of_word_suffix");
  ModelSpec& m = spec.model;
  auto flag = [&](const char* key) {
    const auto it = model.find(key);
    return it != model.end() && it->is_boolean() && it->get<bool>();
  };
  m.ignoreMerges = flag("ignore_merges");
  m.byteFallback = flag("byte_fallback");
  m.fuseUnk = flag("fuse_unk");
  if (const auto it = model.find("unk_token"); it != model.end() && !it->is_null())
    m.unkToken = r.string(*it, "/model/unk_token");
  if (spec.byteLevel() && m.byteFallback)
    r.unsupported("/model/byte_fallback", "byte fallback with a ByteLevel pre-tokenizer is not supported (every byte is a symbol already)");

  // Present and of the right type, vocab and merges were streamed; otherwise these name
  // what is wrong with them.
  if (!file.vocabStreamed) r.unsupported("/model/vocab", r.member(model, "/model", "vocab").dump(-1).substr(0, 40) + " is not an object {token: id}");
  if (!file.mergesStreamed) r.unsupported("/model/merges", r.member(model, "/model", "merges").dump(-1).substr(0, 40) + " is not an array");
  m.vocab = std::move(file.vocab);
  m.merges = std::move(file.merges);
}

void readAddedTokens(const Reader& r, const json& root, TokenizerSpec& spec) {
  const auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return;
  if (!it->is_array()) r.unsupported("/added_tokens", "expected an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    const std::string ptr = "/added_tokens/" + std::to_string(i);
    const json& id = r.member(t, ptr, "id");
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
      r.unsupported(ptr + "/id", "expected a non-negative 32-bit id, found " + id.dump());
    AddedTokenSpec added{.id = id.get<std::int32_t>(), .content = r.string(r.member(t, ptr, "content"), ptr + "/content")};
    if (added.content.empty()) r.unsupported(ptr + "/content", "an added token cannot be empty");
    // These options change where a token matches; Qwen-style files set them all to false.
    for (const char* key : {"single_word", "lstrip", "rstrip", "normalized"}) r.requireFlag(t, ptr, key, false);
    if (const auto s = t.find("special"); s != t.end() && s->is_boolean()) added.special = s->get<bool>();
    spec.addedTokens.push_back(std::move(added));
  }
}

}  // namespace

TokenizerSpec readTokenizerJson(const std::filesystem::path& path) {
  const Reader reader(path);
  StreamedTokenizerJson file = parseTokenizerJson(readWholeFile(path, "tokenizer file"), path);
  const json& root = file.rest;
  if (!root.is_object()) reader.unsupported("", "expected a JSON object at the top level");
  TokenizerSpec spec;
  readNormalizer(reader, root, spec);
  readPreTokenizer(reader, root, spec);
  readDecoder(reader, root, spec);
  readPostProcessor(reader, root);
  readModel(reader, file, spec);
  readAddedTokens(reader, root, spec);
  return spec;
}

}  // namespace dfi::tokenizer::detail
