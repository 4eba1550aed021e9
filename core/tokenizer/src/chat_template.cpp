#include "dfi/tokenizer/chat_template.h"

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/jinja/template.h"
#include "read_file.h"

namespace dfi::tokenizer {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

struct ChatTemplate::Parsed {
  jinja::Template engine;
  fs::path source;
  std::vector<std::pair<std::string, std::string>> specialTokens;
};

namespace {

// transformers' SPECIAL_TOKENS_ATTRIBUTES: the named tokens its special_tokens_map passes.
// The variables render() sets from its own arguments, whatever the keywords say.
constexpr std::array<std::string_view, 5> kPassedByRender{"messages", "tools", "documents", "add_generation_prompt",
                                                           "enable_thinking"};

constexpr std::array<std::string_view, 7> kSpecialTokenNames{"bos_token", "eos_token", "unk_token", "sep_token",
                                                              "pad_token", "cls_token", "mask_token"};

ordered_json readJson(const fs::path& file, const std::string& what) {
  const std::string text = detail::readWholeFile(file, what);
  try {
    return ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = file.string(), .byteOffset = e.byte});
  } catch (const nlohmann::json::exception& e) {  // a number too large for a double
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = file.string()});
  }
}

// A token as tokenizer configs write it: a string, or an AddedToken object {"content": ...}.
std::optional<std::string> tokenText(const ordered_json& value, const fs::path& file, std::string_view field) {
  if (value.is_null()) return std::nullopt;
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string())
    return value["content"].get<std::string>();
  throw ValidationError("expected a token as a string or an object with \"content\"",
                        {.file = file.string(), .item = std::string(field)});
}

// The named special tokens as transformers loads them: tokenizer_config.json's, and, for a
// config without added_tokens_decoder (the legacy layout), special_tokens_map.json's over them.
std::vector<std::pair<std::string, std::string>> specialTokensOf(const fs::path& dir, const ordered_json* config) {
  std::vector<std::pair<std::string, std::string>> tokens;
  auto set = [&](std::string_view name, const std::optional<std::string>& text) {
    auto it = std::ranges::find(tokens, name, &std::pair<std::string, std::string>::first);
    if (!text) return;
    if (it == tokens.end())
      tokens.emplace_back(std::string(name), *text);
    else
      it->second = *text;
  };
  const fs::path configFile = dir / "tokenizer_config.json";
  if (config)
    for (std::string_view name : kSpecialTokenNames)
      if (const auto it = config->find(std::string(name)); it != config->end()) set(name, tokenText(*it, configFile, name));
  const fs::path mapFile = dir / "special_tokens_map.json";
  if ((!config || !config->contains("added_tokens_decoder")) && fs::exists(mapFile)) {
    const ordered_json map = readJson(mapFile, "special tokens map");
    for (std::string_view name : kSpecialTokenNames)
      if (const auto it = map.find(std::string(name)); it != map.end()) set(name, tokenText(*it, mapFile, name));
  }
  // In transformers' attribute order, whatever order the files list them in.
  std::ranges::stable_sort(tokens, {}, [](const auto& t) {
    return std::ranges::find(kSpecialTokenNames, t.first) - kSpecialTokenNames.begin();
  });
  return tokens;
}

// The keywords' JSON object, in the order given.
ordered_json keywordObject(std::string_view keywords) {
  if (keywords.empty()) return ordered_json::object();
  auto object = ordered_json::parse(keywords, nullptr, false);
  if (object.is_discarded() || !object.is_object())
    throw UsageError("chat template keywords: '" + std::string(keywords) + "' is not a JSON object");
  return object;
}

}  // namespace

ChatTemplate ChatTemplate::fromText(std::string_view text, const fs::path& source,
                                    std::vector<std::pair<std::string, std::string>> specialTokens) {
  return ChatTemplate(std::make_shared<const Parsed>(
      Parsed{jinja::Template::parse(text, source.string()), source, std::move(specialTokens)}));
}

std::optional<ChatTemplate> ChatTemplate::find(const fs::path& dir) {
  const fs::path configFile = dir / "tokenizer_config.json";
  std::optional<ordered_json> config;
  if (fs::exists(configFile)) config = readJson(configFile, "tokenizer config");
  auto tokens = specialTokensOf(dir, config ? &*config : nullptr);

  if (const fs::path jinjaFile = dir / "chat_template.jinja"; fs::exists(jinjaFile))
    return fromText(detail::readWholeFile(jinjaFile, "chat template file"), jinjaFile, std::move(tokens));
  if (!config) return std::nullopt;
  const auto field = config->find("chat_template");
  if (field == config->end() || field->is_null()) return std::nullopt;
  std::string text;
  try {
    text = jinja::selectChatTemplate(*field);
  } catch (const Error& e) {  // a named list without "default", or another shape
    throw ValidationError(e.message(), {.file = configFile.string(), .item = "chat_template"});
  }
  return fromText(text, configFile, std::move(tokens));
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, const ChatOptions& options) const {
  ordered_json context = ordered_json::object();
  ordered_json list = ordered_json::array();
  for (const ChatMessage& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
  context["messages"] = std::move(list);
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = options.addGenerationPrompt;
  for (const auto& [name, text] : parsed_->specialTokens) context[name] = text;
  context["enable_thinking"] = options.enableThinking;
  const ordered_json keywords = keywordObject(options.keywords);
  for (const auto& [key, value] : keywords.items()) {
    if (std::ranges::find(kPassedByRender, key) != kPassedByRender.end())
      throw UsageError("chat template keyword '" + key + "' is set by the evaluation itself" +
                       (key == "enable_thinking" ? " (use --thinking)" : ""));
    context[key] = value;  // over a special token too
  }
  return parsed_->engine.render(context);
}

std::vector<std::string> ChatTemplate::variablesLeftAtDefault(std::string_view keywords) const {
  std::vector<std::string> passed(kPassedByRender.begin(), kPassedByRender.end());
  for (const auto& [name, text] : parsed_->specialTokens) passed.push_back(name);
  const ordered_json given = keywordObject(keywords);
  for (const auto& [key, value] : given.items()) passed.push_back(key);
  std::vector<std::string> left;
  for (const std::string& name : parsed_->engine.variables())
    if (std::ranges::find(passed, name) == passed.end()) left.push_back(name);
  return left;
}

const fs::path& ChatTemplate::source() const { return parsed_->source; }

const std::vector<std::pair<std::string, std::string>>& ChatTemplate::specialTokens() const {
  return parsed_->specialTokens;
}

std::optional<RenderingDifference> firstDifference(std::string_view expected, std::string_view actual) {
  const auto [e, a] = std::ranges::mismatch(expected, actual);
  if (e == expected.end() && a == actual.end()) return std::nullopt;
  std::size_t offset = static_cast<std::size_t>(e - expected.begin());
  // Back to the start of the character both sides were in, so the excerpts are whole UTF-8
  // (the bytes before `offset` are the same on both sides; one side may have ended there).
  const std::string_view longer = offset < expected.size() ? expected : actual;
  while (offset > 0 && (static_cast<unsigned char>(longer[offset]) & 0xC0) == 0x80) --offset;
  auto excerpt = [offset](std::string_view text) {
    std::string_view rest = text.substr(std::min(offset, text.size()));
    std::size_t end = std::min<std::size_t>(40, rest.size());
    while (end < rest.size() && (static_cast<unsigned char>(rest[end]) & 0xC0) == 0x80) ++end;
    return std::string(rest.substr(0, end));
  };
  return RenderingDifference{offset, excerpt(expected), excerpt(actual)};
}

}  // namespace dfi::tokenizer
