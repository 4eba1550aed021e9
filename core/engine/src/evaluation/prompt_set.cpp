#include "dfi/engine/prompt_set.h"

#include <array>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::engine {
namespace {

using nlohmann::json;

constexpr std::array kPromptKeys{"prompt", "question", "turns", "messages", "ids"};

PromptSpec parseLine(const json& j, const std::string& file, std::size_t line, std::int64_t index) {
  auto fail = [&](const std::string& field, const std::string& why) -> FormatError {
    return FormatError(why, {.file = file, .item = "line " + std::to_string(line) + ": " + field});
  };
  if (!j.is_object()) throw fail("line", "expected a JSON object");
  PromptSpec p;
  p.line = line;
  p.id = index;
  if (j.contains("id")) {
    if (!j["id"].is_number_integer()) throw fail("id", "must be an integer");
    p.id = j["id"].get<std::int64_t>();
  }
  if (j.contains("dataset")) {
    if (!j["dataset"].is_string()) throw fail("dataset", "must be a string");
    p.dataset = j["dataset"].get<std::string>();
  }
  int kinds = 0;
  for (const char* key : kPromptKeys) kinds += int(j.contains(key));
  if (kinds != 1)
    throw fail("prompt", "needs exactly one of \"prompt\", \"question\", \"turns\", \"messages\" or \"ids\"");
  for (const char* key : {"prompt", "question"}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_string() || j[key].get<std::string>().empty()) throw fail(key, "must be a non-empty string");
    p.messages.push_back({"user", j[key].get<std::string>()});
  }
  if (j.contains("turns")) {
    const json& t = j["turns"];
    if (!t.is_array() || t.empty()) throw fail("turns", "must be a non-empty array of strings");
    for (std::size_t i = 0; i < t.size(); ++i)
      if (!t[i].is_string() || t[i].get<std::string>().empty())
        throw fail("turns[" + std::to_string(i) + "]", "must be a non-empty string");
    p.messages.push_back({"user", t[0].get<std::string>()});
    p.unevaluatedTurns = t.size() - 1;
  }
  if (j.contains("messages")) {
    const json& m = j["messages"];
    if (!m.is_array() || m.empty()) throw fail("messages", "must be a non-empty array");
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (!m[i].is_object() || !m[i].contains("role") || !m[i].contains("content") ||
          !m[i]["role"].is_string() || !m[i]["content"].is_string())
        throw fail("messages[" + std::to_string(i) + "]", "needs string \"role\" and \"content\"");
      p.messages.push_back({m[i]["role"].get<std::string>(), m[i]["content"].get<std::string>()});
    }
  }
  if (j.contains("ids")) {
    const json& ids = j["ids"];
    if (!ids.is_array() || ids.empty()) throw fail("ids", "must be a non-empty array of token ids");
    for (const json& id : ids) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
        throw fail("ids", "token ids must be integers in [0, 2^31)");
      p.ids.push_back(id.get<std::int32_t>());
    }
  }
  return p;
}

// One non-blank, non-comment line, checked against the ids seen so far.
PromptSpec parseText(const std::string& text, const std::filesystem::path& jsonl, std::size_t line,
                     std::int64_t index, const std::set<std::int64_t>& seen) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a huge number
    throw FormatError(std::string("not JSON: ") + e.what(),
                      {.file = jsonl.string(), .item = "line " + std::to_string(line)});
  }
  PromptSpec p = parseLine(j, jsonl.string(), line, index);
  if (seen.contains(p.id))
    throw ValidationError("duplicate prompt id " + std::to_string(p.id),
                          {.file = jsonl.string(), .item = "line " + std::to_string(line) + ": id"});
  return p;
}

}  // namespace

PromptSet readPromptSet(const std::filesystem::path& jsonl, PromptSetOptions options) {
  std::ifstream in(jsonl);
  if (!in) throw IoError("cannot open the prompts file", {.file = jsonl.string()});
  PromptSet set;
  std::set<std::int64_t> seen;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos || text[text.find_first_not_of(" \t")] == '#')
      continue;
    try {
      PromptSpec p = parseText(text, jsonl, line, static_cast<std::int64_t>(set.prompts.size()), seen);
      seen.insert(p.id);
      set.prompts.push_back(std::move(p));
    } catch (const Error& e) {
      if (!options.skipMalformed) throw;
      set.skipped.push_back({line, e.what()});
    }
  }
  if (set.prompts.empty()) throw FormatError("no prompts in the file", {.file = jsonl.string()});
  return set;
}

std::vector<PromptSpec> loadPromptSet(const std::filesystem::path& jsonl) { return readPromptSet(jsonl).prompts; }

std::vector<PromptSpec> shardOf(const std::vector<PromptSpec>& prompts, int index, int count) {
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("shard must be i/N with 0 <= i < N (got " + std::to_string(index) + "/" +
                     std::to_string(count) + ")");
  std::vector<PromptSpec> out;
  for (std::size_t i = static_cast<std::size_t>(index); i < prompts.size(); i += static_cast<std::size_t>(count))
    out.push_back(prompts[i]);
  return out;
}

std::vector<PromptSpec> selectPrompts(const std::vector<PromptSpec>& prompts, std::optional<std::int64_t> limit,
                                      int index, int count) {
  if (limit && *limit < 1) throw UsageError("--limit must be at least 1 (got " + std::to_string(*limit) + ")");
  if (!limit || static_cast<std::size_t>(*limit) >= prompts.size()) return shardOf(prompts, index, count);
  const std::vector<PromptSpec> first(prompts.begin(), prompts.begin() + *limit);
  return shardOf(first, index, count);
}

}  // namespace dfi::engine
