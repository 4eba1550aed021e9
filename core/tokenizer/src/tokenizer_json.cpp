#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
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

void readNormalizer(const Reader& r, const json& root, TokenizerSpec& spec) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) return;
  r.requireType(*it, "/normalizer", "NFC");
  spec.nfc = true;
}

// The Qwen layout: Sequence[Split(regex, Isolated), ByteLevel(use_regex=false)].
void readPreTokenizer(const Reader& r, const json& root, TokenizerSpec& spec) {
  const std::string base = "/pre_tokenizer";
  const json& pre = r.member(root, "", "pre_tokenizer");
  r.requireType(pre, base, "Sequence");
  const json& steps = r.member(pre, base, "pretokenizers");
  if (!steps.is_array() || steps.size() != 2)
    r.unsupported(base + "/pretokenizers", "expected [Split, ByteLevel]");
  const json& split = steps[0];
  const std::string splitPtr = base + "/pretokenizers/0";
  r.requireType(split, splitPtr, "Split");
  const json& pattern = r.member(split, splitPtr, "pattern");
  if (!pattern.is_object() || !pattern.contains("Regex"))
    r.unsupported(splitPtr + "/pattern", "only a {\"Regex\": ...} pattern is supported");
  spec.splitRegex = r.string(pattern["Regex"], splitPtr + "/pattern/Regex");
  if (r.string(r.member(split, splitPtr, "behavior"), splitPtr + "/behavior") != "Isolated")
    r.unsupported(splitPtr + "/behavior", "only \"Isolated\" is supported");
  r.requireFlag(split, splitPtr, "invert", false);

  const std::string bytePtr = base + "/pretokenizers/1";
  r.requireType(steps[1], bytePtr, "ByteLevel");
  r.requireFlag(steps[1], bytePtr, "add_prefix_space", false);
  r.requireFlag(steps[1], bytePtr, "use_regex", false);
}

void readDecoderAndPostProcessor(const Reader& r, const json& root) {
  r.requireType(r.member(root, "", "decoder"), "/decoder", "ByteLevel");
  // A ByteLevel post-processor only adjusts offsets; anything else would add tokens.
  if (const auto it = root.find("post_processor"); it != root.end() && !it->is_null())
    r.requireType(*it, "/post_processor", "ByteLevel");
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
  r.requireFlag(model, "/model", "byte_fallback", false);
  r.requireNullOrEmpty(model, "/model", "continuing_subword_prefix");
  r.requireNullOrEmpty(model, "/model", "end_of_word_suffix");
  if (const auto it = model.find("ignore_merges"); it != model.end() && it->is_boolean())
    spec.ignoreMerges = it->get<bool>();

  // Present and of the right type, vocab and merges were streamed; otherwise these name
  // what is wrong with them.
  if (!file.vocabStreamed) r.unsupported("/model/vocab", r.member(model, "/model", "vocab").dump(-1).substr(0, 40) + " is not an object {token: id}");
  if (!file.mergesStreamed) r.unsupported("/model/merges", r.member(model, "/model", "merges").dump(-1).substr(0, 40) + " is not an array");
  spec.vocab = std::move(file.vocab);
  spec.merges = std::move(file.merges);
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
  readDecoderAndPostProcessor(reader, root);
  readModel(reader, file, spec);
  readAddedTokens(reader, root, spec);
  return spec;
}

}  // namespace dfi::tokenizer::detail
