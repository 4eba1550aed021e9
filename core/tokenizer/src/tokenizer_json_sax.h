#pragma once
// Parses tokenizer.json in one streaming pass: model.vocab and model.merges (hundreds of
// thousands of entries in real files) go straight into vectors, everything else into a small
// nlohmann::json document. Building a full document first made loading several times slower
// than Hugging Face's. Internal to dfi_tokenizer.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dfi::tokenizer::detail {

struct StreamedTokenizerJson {
  nlohmann::json rest;  // the document without the entries of model.vocab and model.merges
  bool vocabStreamed = false;   // model.vocab was an object, its entries are in `vocab`
  bool mergesStreamed = false;  // model.merges was an array, its entries are in `merges`
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  std::vector<std::pair<std::string, std::string>> merges;
};

// Throws FormatError (not JSON, with the byte offset) or ValidationError (a vocab id or a
// merge of the wrong shape, naming the JSON pointer), both naming `path`.
StreamedTokenizerJson parseTokenizerJson(const std::string& text, const std::filesystem::path& path);

}  // namespace dfi::tokenizer::detail
