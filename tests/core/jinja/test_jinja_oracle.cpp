// Every case of tests/oracle/gen_chat_template_cases.py: the text transformers rendered with
// jinja2 must come out of dfi::jinja byte for byte, and where jinja2 raised, so must we.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "dfi/jinja/template.h"

using nlohmann::ordered_json;

namespace {

std::filesystem::path oracleDir() {
  const char* dir = std::getenv("DFI_CHAT_TEMPLATE_ORACLE");
  return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The generator froze Python's datetime.now() at these local fields; mktime maps them back.
std::chrono::system_clock::time_point localTime(const std::string& text) {
  std::tm tm{};
  std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  return std::chrono::system_clock::from_time_t(std::mktime(&tm));
}

}  // namespace

TEST(JinjaOracle, EveryRealTemplateRendersLikeTransformers) {
  if (oracleDir().empty()) GTEST_SKIP() << "DFI_CHAT_TEMPLATE_ORACLE not set (run through ctest)";
  std::ifstream in(oracleDir() / "cases.jsonl");
  ASSERT_TRUE(in) << "no cases.jsonl in " << oracleDir();
  std::map<std::string, dfi::jinja::Template> templates;
  std::map<std::string, std::pair<int, int>> passedByTemplate;
  int total = 0, failures = 0;
  std::string line;
  while (std::getline(in, line)) {
    const ordered_json c = ordered_json::parse(line);
    const std::string name = c["template"];
    if (!templates.count(name)) {
      // A .jinja file, or a tokenizer_config.json whose chat_template field holds the template.
      const auto path = std::filesystem::path(DFI_SOURCE_DIR) / "tests/data" / name;
      std::string text = readFile(path);
      if (path.extension() == ".json") text = dfi::jinja::selectChatTemplate(ordered_json::parse(text)["chat_template"]);
      templates.emplace(name, dfi::jinja::Template::parse(text, name));
    }
    dfi::jinja::RenderOptions options;
    options.now = localTime(c["now"].get<std::string>());
    ++total;
    auto& [passed, count] = passedByTemplate[name];
    ++count;
    const bool wantError = c.value("error", false);
    try {
      const std::string text = templates.at(name).render(c["context"], options);
      if (wantError) {
        ADD_FAILURE() << name << " case " << c["case"] << ": jinja2 raised (" << c.value("message", "") << ") but we rendered:\n" << text;
        ++failures;
      } else if (text != c["text"].get<std::string>()) {
        ADD_FAILURE() << name << " case " << c["case"] << " differs.\nexpected: " << ordered_json(c["text"]).dump()
                      << "\nactual:   " << ordered_json(text).dump();
        ++failures;
      } else {
        ++passed;
      }
    } catch (const dfi::jinja::TemplateRaised& e) {
      // The template's own raise_exception: jinja2 reports it as a plain TemplateError.
      const std::string expected = c.value("message", "");
      if (!wantError || expected != "TemplateError: " + e.message()) {
        ADD_FAILURE() << name << " case " << c["case"] << ": raise_exception(" << e.message() << "), jinja2: " << expected;
        ++failures;
      } else {
        ++passed;
      }
    } catch (const dfi::Error& e) {
      if (!wantError || c.value("message", "").rfind("TemplateError: ", 0) == 0) {
        ADD_FAILURE() << name << " case " << c["case"] << ": we raised " << e.what();
        ++failures;
      } else {
        ++passed;
      }
    }
    if (failures > 20) break;
  }
  for (const auto& [name, counts] : passedByTemplate)
    std::cout << name << ": " << counts.first << "/" << counts.second << " cases pass\n";
  EXPECT_GE(total, 300);
  EXPECT_EQ(failures, 0);
}
