#include "dfi/engine/prompt_set.h"

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::engine {
namespace {

using nlohmann::json;

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
  const int kinds = int(j.contains("prompt")) + int(j.contains("messages")) + int(j.contains("ids"));
  if (kinds != 1) throw fail("prompt", "needs exactly one of \"prompt\", \"messages\" or \"ids\"");
  if (j.contains("prompt")) {
    if (!j["prompt"].is_string() || j["prompt"].get<std::string>().empty())
      throw fail("prompt", "must be a non-empty string");
    p.messages.push_back({"user", j["prompt"].get<std::string>()});
  } else if (j.contains("messages")) {
    const json& m = j["messages"];
    if (!m.is_array() || m.empty()) throw fail("messages", "must be a non-empty array");
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (!m[i].is_object() || !m[i].contains("role") || !m[i].contains("content") ||
          !m[i]["role"].is_string() || !m[i]["content"].is_string())
        throw fail("messages[" + std::to_string(i) + "]", "needs string \"role\" and \"content\"");
      p.messages.push_back({m[i]["role"].get<std::string>(), m[i]["content"].get<std::string>()});
    }
  } else {
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

}  // namespace

std::vector<PromptSpec> loadPromptSet(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl);
  if (!in) throw IoError("cannot open the prompts file", {.file = jsonl.string()});
  std::vector<PromptSpec> prompts;
  std::set<std::int64_t> seen;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos || text[text.find_first_not_of(" \t")] == '#')
      continue;
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a huge number
      throw FormatError(std::string("not JSON: ") + e.what(),
                        {.file = jsonl.string(), .item = "line " + std::to_string(line)});
    }
    PromptSpec p = parseLine(j, jsonl.string(), line, static_cast<std::int64_t>(prompts.size()));
    if (!seen.insert(p.id).second)
      throw ValidationError("duplicate prompt id " + std::to_string(p.id),
                            {.file = jsonl.string(), .item = "line " + std::to_string(line) + ": id"});
    prompts.push_back(std::move(p));
  }
  if (prompts.empty()) throw FormatError("no prompts in the file", {.file = jsonl.string()});
  return prompts;
}

std::vector<PromptSpec> shardOf(const std::vector<PromptSpec>& prompts, int index, int count) {
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("shard must be i/N with 0 <= i < N (got " + std::to_string(index) + "/" +
                     std::to_string(count) + ")");
  std::vector<PromptSpec> out;
  for (std::size_t i = static_cast<std::size_t>(index); i < prompts.size(); i += static_cast<std::size_t>(count))
    out.push_back(prompts[i]);
  return out;
}

}  // namespace dfi::engine
