#include "tokenizer_json_sax.h"

#include "dfi/base/error.h"

namespace dfi::tokenizer::detail {
namespace {

using nlohmann::json;

class Handler : public nlohmann::json_sax<json> {
 public:
  Handler(StreamedTokenizerJson& out, const std::filesystem::path& path) : out_(out), path_(path) {}

  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override {
    if (mode_ == Mode::Vocab) return vocabId(v);
    return value(v);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (mode_ == Mode::Vocab) return vocabId(v <= INT32_MAX ? static_cast<std::int64_t>(v) : -1);
    return value(v);
  }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool binary(binary_t&) override { return value(nullptr); }

  bool string(string_t& s) override {
    if (mode_ == Mode::Merges && mergeDepth_ == 0) return legacyMerge(std::move(s));
    if (mode_ == Mode::Merges && mergeDepth_ == 1) {
      pair_.push_back(std::move(s));
      return true;
    }
    return value(std::move(s));
  }

  bool key(string_t& k) override {
    pendingKey_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) override {
    if (mode_ != Mode::Dom) return unexpected();
    if (underModel("vocab")) {
      mode_ = Mode::Vocab;
      out_.vocabStreamed = true;
      return true;
    }
    stack_.push_back(add(json::object()));
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Dom;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) override {
    if (mode_ == Mode::Merges && mergeDepth_ == 0) {
      mergeDepth_ = 1;
      pair_.clear();
      return true;
    }
    if (mode_ != Mode::Dom) return unexpected();
    if (underModel("merges")) {
      mode_ = Mode::Merges;
      out_.mergesStreamed = true;
      return true;
    }
    stack_.push_back(add(json::array()));
    return true;
  }
  bool end_array() override {
    if (mode_ == Mode::Merges) {
      if (mergeDepth_ == 0) {
        mode_ = Mode::Dom;
        return true;
      }
      if (pair_.size() != 2) fail(mergePointer(), "a merge must be [\"a\", \"b\"]");
      out_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      mergeDepth_ = 0;
      return true;
    }
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw FormatError(std::string("not valid JSON: ") + e.what(), {.file = path_.string(), .byteOffset = position});
  }

 private:
  enum class Mode { Dom, Vocab, Merges };

  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw ValidationError(what, {.file = path_.string(), .item = pointer});
  }
  std::string mergePointer() const { return "/model/merges/" + std::to_string(out_.merges.size()); }

  // Anything but the expected scalars inside vocab or merges.
  bool unexpected() {
    if (mode_ == Mode::Vocab) fail("/model/vocab/" + pendingKey_, "expected a token id");
    fail(mergePointer(), "a merge must be \"a b\" or [\"a\", \"b\"]");
  }

  template <class V>
  bool value(V&& v) {
    if (mode_ != Mode::Dom) return unexpected();
    add(json(std::forward<V>(v)));
    return true;
  }

  bool vocabId(std::int64_t id) {
    if (id < 0 || id > INT32_MAX) fail("/model/vocab/" + pendingKey_, "expected a non-negative 32-bit id");
    out_.vocab.emplace_back(std::move(pendingKey_), static_cast<std::int32_t>(id));
    return true;
  }

  bool legacyMerge(std::string s) {
    // "a b": byte-level tokens never contain a plain space (it is spelled U+0120).
    const auto space = s.find(' ');
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
      fail(mergePointer(), "a merge string must be two tokens separated by one space, found \"" + s + "\"");
    out_.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    return true;
  }

  // True when the container about to start is model.<key> at the top level.
  bool underModel(const char* key) const {
    return stack_.size() == 2 && stack_[0] == &out_.rest && stack_[1]->is_object() && modelKeyOpen_ &&
           pendingKey_ == key;
  }

  json* add(json v) {
    if (stack_.empty()) {
      out_.rest = std::move(v);
      return &out_.rest;
    }
    json& parent = *stack_.back();
    if (parent.is_object()) {
      // Remember whether the object being opened at depth 1 is "model".
      if (stack_.size() == 1) modelKeyOpen_ = pendingKey_ == "model";
      return &(parent[pendingKey_] = std::move(v));
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }

  StreamedTokenizerJson& out_;
  const std::filesystem::path& path_;
  std::vector<json*> stack_;
  std::string pendingKey_;
  bool modelKeyOpen_ = false;
  Mode mode_ = Mode::Dom;
  int mergeDepth_ = 0;
  std::vector<std::string> pair_;
};

}  // namespace

StreamedTokenizerJson parseTokenizerJson(const std::string& text, const std::filesystem::path& path) {
  StreamedTokenizerJson out;
  Handler handler(out, path);
  json::sax_parse(text, &handler);
  return out;
}

}  // namespace dfi::tokenizer::detail
