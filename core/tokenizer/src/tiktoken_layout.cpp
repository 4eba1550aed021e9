#include "tiktoken_layout.h"

#include <algorithm>
#include <array>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/tokenizer/byte_level.h"
#include "read_file.h"
#include "tiktoken_families.h"

namespace dfi::tokenizer::detail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Standard base64 with padding, strictly: a rank file is machine-written.
std::optional<std::string> decodeBase64(std::string_view text) {
  static constexpr auto kValues = [] {
    std::array<std::int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return v;
  }();
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        ++pad;
        group <<= 6;
        continue;
      }
      const int v = kValues[static_cast<unsigned char>(c)];
      if (v < 0 || pad > 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(v);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (pad < 2) out.push_back(static_cast<char>((group >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(group & 0xFF));
  }
  return out;
}

std::optional<json> readJsonIfPresent(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const std::string text = readWholeFile(path, "model config");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = path.string(), .byteOffset = e.byte});
  }
}

// tokenizer_config.json's added_tokens_decoder {"<id>": {"content", "special", ...}}, by id.
std::optional<std::map<std::int64_t, AddedTokenSpec>> configuredSpecials(const fs::path& dir) {
  const fs::path path = dir / "tokenizer_config.json";
  const auto config = readJsonIfPresent(path);
  if (!config || !config->is_object() || !config->contains("added_tokens_decoder")) return std::nullopt;
  auto fail = [&](const std::string& item, const std::string& what) -> void {
    throw ValidationError(what, {.file = path.string(), .item = item});
  };
  const json& decoder = (*config)["added_tokens_decoder"];
  if (!decoder.is_object()) fail("/added_tokens_decoder", "expected an object {id: token}");
  std::map<std::int64_t, AddedTokenSpec> out;
  for (const auto& [key, entry] : decoder.items()) {
    const std::string ptr = "/added_tokens_decoder/" + key;
    std::size_t used = 0;
    std::int64_t id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
    }
    if (used != key.size() || id < 0 || id > INT32_MAX) fail(ptr, "expected a non-negative 32-bit id as the key");
    if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string() ||
        entry["content"].get_ref<const std::string&>().empty())
      fail(ptr + "/content", "expected a non-empty string");
    // These options change where a token matches; the tiktoken families set them all to false.
    for (const char* flag : {"single_word", "lstrip", "rstrip", "normalized"})
      if (const auto it = entry.find(flag); it != entry.end() && !it->is_null() && *it != false)
        fail(ptr + "/" + flag, "only false is supported, found " + it->dump());
    const auto special = entry.find("special");
    out[id] = {.id = static_cast<std::int32_t>(id), .content = entry["content"],
               .special = special != entry.end() && special->is_boolean() && special->get<bool>()};
  }
  return out;
}

std::string modelType(const fs::path& dir) {
  const auto config = readJsonIfPresent(dir / "config.json");
  if (!config || !config->is_object()) return {};
  const auto it = config->find("model_type");
  return it != config->end() && it->is_string() ? it->get<std::string>() : std::string();
}

TiktokenFamily familyOf(const fs::path& rankFile) {
  if (rankFile.filename() == "tokenizer.model" && rankFile.parent_path().filename() == "original") return TiktokenFamily::Llama3;
  if (rankFile.filename() == "tiktoken.model") return TiktokenFamily::Kimi;
  const std::string stem = rankFile.stem().string();
  if (stem == "o200k_base") return TiktokenFamily::O200kBase;
  if (stem == "o200k_harmony") return TiktokenFamily::O200kHarmony;
  throw ValidationError("unknown tiktoken encoding \"" + stem + "\" (known: o200k_base, o200k_harmony)",
                        {.file = rankFile.string(), .item = "file name"});
}

}  // namespace

std::vector<std::pair<std::string, std::int32_t>> readTiktokenRanks(const fs::path& path) {
  const std::string text = readWholeFile(path, "tiktoken rank file");
  std::vector<std::pair<std::string, std::int32_t>> ranks;
  std::size_t lineNumber = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t lineStart = pos;
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    pos = end + 1;
    ++lineNumber;
    std::string_view line(text.data() + lineStart, end - lineStart);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      throw FormatError(what + " (a tiktoken rank file has \"<base64 token> <rank>\" lines; a SentencePiece .model is not one)",
                        {.file = path.string(), .item = "line " + std::to_string(lineNumber), .byteOffset = lineStart});
    };
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) bad("expected two fields");
    const auto token = decodeBase64(line.substr(0, space));
    if (!token) bad("the token is not base64");
    const std::string_view rankText = line.substr(space + 1);
    std::int64_t rank = 0;
    if (rankText.empty() || rankText.size() > 10 ||
        !std::all_of(rankText.begin(), rankText.end(), [](char c) { return c >= '0' && c <= '9'; }))
      bad("the rank is not a non-negative integer");
    for (const char c : rankText) rank = rank * 10 + (c - '0');
    if (rank > INT32_MAX) bad("the rank does not fit 32 bits");
    ranks.emplace_back(std::move(*token), static_cast<std::int32_t>(rank));
  }
  if (ranks.empty()) throw FormatError("no ranks (a tiktoken rank file has \"<base64 token> <rank>\" lines)", {.file = path.string()});
  return ranks;
}

std::optional<fs::path> findTiktokenFile(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& candidate : {dir / "original" / "tokenizer.model", dir / "tiktoken.model"})
    if (fs::is_regular_file(candidate, ec)) return candidate;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".tiktoken" && entry.is_regular_file(ec)) found.push_back(entry.path());
  if (found.size() > 1)
    throw ValidationError("more than one .tiktoken file; cannot tell which is the tokenizer", {.file = dir.string()});
  return found.empty() ? std::nullopt : std::optional(found[0]);
}

TokenizerSpec readTiktokenDirectory(const fs::path& dir, const fs::path& rankFile) {
  TiktokenFamily family = familyOf(rankFile);
  const auto ranks = readTiktokenRanks(rankFile);
  const auto configured = configuredSpecials(dir);
  // gpt-oss's specials are o200k_harmony's, over o200k_base's ranks.
  if (family == TiktokenFamily::O200kBase && !configured && modelType(dir) == "gpt_oss") family = TiktokenFamily::O200kHarmony;

  TokenizerSpec spec;
  spec.model.mergeSource = ModelSpec::Merges::Ranks;
  spec.model.ignoreMerges = true;  // tiktoken emits a piece that is a token as that token
  spec.model.vocab.reserve(ranks.size());
  for (const auto& [bytes, rank] : ranks) spec.model.vocab.emplace_back(byteLevelSpelling(bytes), rank);
  spec.preTokenizer.push_back({.kind = PreTokenizerStep::Kind::Split, .pattern = splitPattern(family),
                               .field = std::string(familyName(family)) + " split pattern"});
  spec.preTokenizer.push_back({.kind = PreTokenizerStep::Kind::ByteLevel});
  spec.decoder.push_back({.kind = DecoderStep::Kind::ByteLevel});
  spec.addedIdsAsGiven = true;
  if (configured) {
    std::map<std::int64_t, AddedTokenSpec> specials = *configured;
    for (std::size_t i = 0; i < reservedSpecialSlots(family); ++i) {
      const auto id = static_cast<std::int64_t>(ranks.size() + i);
      if (!specials.contains(id)) specials[id] = {.id = static_cast<std::int32_t>(id), .content = reservedSpecialName(family, id), .special = true};
    }
    for (auto& [id, token] : specials) spec.addedTokens.push_back(std::move(token));
  } else {
    spec.addedTokens = defaultSpecials(family, ranks.size());
  }
  return spec;
}

}  // namespace dfi::tokenizer::detail
