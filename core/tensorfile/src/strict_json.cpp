#include "strict_json.h"

#include <iterator>
#include <optional>

#include "dfi/base/error.h"

namespace dfi::tensorfile::detail {
namespace {

using nlohmann::json;

// nlohmann's SAX interface reports no positions except for syntax errors, so the input goes
// through an iterator that publishes how many bytes the lexer has consumed.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* position, const char* begin, std::size_t* consumed)
      : position_(position), begin_(begin), consumed_(consumed) {}
  reference operator*() const { return *position_; }
  CountingIterator& operator++() {
    ++position_;
    *consumed_ = static_cast<std::size_t>(position_ - begin_);
    return *this;
  }
  CountingIterator operator++(int) {
    auto copy = *this;
    ++*this;
    return copy;
  }
  bool operator==(const CountingIterator& other) const { return position_ == other.position_; }

 private:
  const char* position_;
  const char* begin_;
  std::size_t* consumed_;
};

// Builds the DOM like nlohmann's own SAX DOM parser, but inserts each key before its value, so
// that a key already present in its object stops the parse.
class StrictDomBuilder {
 public:
  StrictDomBuilder(std::string_view text, const std::size_t* consumed, const StrictJsonOptions& options)
      : text_(text), consumed_(consumed), options_(options) {}

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(json::number_integer_t value) { return put(value); }
  bool number_unsigned(json::number_unsigned_t value) { return put(value); }
  bool number_float(json::number_float_t value, const json::string_t&) { return put(value); }
  bool string(json::string_t& value) { return put(std::move(value)); }
  bool binary(json::binary_t&) { return fail("binary values are not JSON", *consumed_); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    const std::size_t offset = openingQuoteBefore(*consumed_);
    auto& object = stack_.back()->get_ref<json::object_t&>();
    auto [slot, inserted] = object.emplace(std::move(name), nullptr);
    if (!inserted) {
      path_.push_back(slot->first);
      return fail("duplicate key \"" + slot->first + "\"", offset);
    }
    pendingKey_ = &slot->first;
    pendingValue_ = &slot->second;
    if (stack_.size() == 1) members_.push_back({slot, offset, {}});
    else if (stack_.size() == 2 && options_.recordChildKeys) members_.back().childKeys.emplace_back(slot->first, offset);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
    // nlohmann counts the offending byte as read; report the byte itself.
    std::string message = error.what();
    if (auto colon = message.find(": "); colon != std::string::npos) message.erase(0, colon + 2);
    return fail("invalid JSON: " + message, position > 0 ? position - 1 : 0);
  }

  struct Failure {
    std::string message;
    std::string path;
    std::size_t offset;
  };
  const std::optional<Failure>& failure() const { return failure_; }

  std::vector<JsonMember> takeMembers() {
    std::vector<JsonMember> members;
    members.reserve(members_.size());
    for (auto& member : members_)
      members.push_back({member.slot->first, member.offset, std::move(member.slot->second), std::move(member.childKeys)});
    return members;
  }

 private:
  struct Member {
    json::object_t::iterator slot;  // in root_; map nodes never move
    std::size_t offset;
    std::vector<std::pair<std::string, std::uint64_t>> childKeys;
  };

  // The key callback comes right after the lexer has read the closing quote; walk back to the
  // opening quote, skipping quotes that are escaped (preceded by an odd run of backslashes).
  std::size_t openingQuoteBefore(std::size_t end) const {
    std::size_t i = end >= 2 ? end - 2 : 0;
    while (i > 0) {
      if (text_[i] == '"') {
        std::size_t backslashes = 0;
        while (backslashes < i && text_[i - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return i;
      }
      --i;
    }
    return 0;
  }

  bool put(json value) { return place(std::move(value)) != nullptr; }

  // Where a new value goes: the root, the end of the open array, or the slot its key made.
  json* place(json value) {
    if (stack_.empty()) {
      if (!value.is_object()) {
        fail("the top level must be a JSON object", *consumed_ > 0 ? *consumed_ - 1 : 0);
        return nullptr;
      }
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    *pendingValue_ = std::move(value);
    return pendingValue_;
  }

  bool open(json container) {
    if (stack_.size() >= options_.maxDepth)
      return fail("nested deeper than " + std::to_string(options_.maxDepth) + " levels", *consumed_ - 1);
    json* placed = place(std::move(container));
    if (!placed) return false;
    if (!stack_.empty())
      path_.push_back(stack_.back()->is_array() ? std::to_string(stack_.back()->size() - 1) : *pendingKey_);
    stack_.push_back(placed);
    return true;
  }

  bool close() {
    stack_.pop_back();
    if (!path_.empty()) path_.pop_back();
    return true;
  }

  bool fail(std::string message, std::size_t offset) {
    std::string path;
    for (const auto& part : path_) path += (path.empty() ? "" : "/") + part;
    failure_ = Failure{std::move(message), std::move(path), offset};
    return false;
  }

  std::string_view text_;
  const std::size_t* consumed_;
  const StrictJsonOptions& options_;
  json root_;
  std::vector<json*> stack_;
  std::vector<std::string> path_;  // keys and array indexes of the open containers
  const std::string* pendingKey_ = nullptr;
  json* pendingValue_ = nullptr;
  std::vector<Member> members_;
  std::optional<Failure> failure_;
};

}  // namespace

std::vector<JsonMember> parseStrictJsonObject(std::string_view text, const StrictJsonOptions& options) {
  std::size_t consumed = 0;
  StrictDomBuilder builder(text, &consumed, options);
  const CountingIterator first(text.data(), text.data(), &consumed);
  const CountingIterator last(text.data() + text.size(), text.data(), &consumed);
  const bool ok = json::sax_parse(first, last, &builder);
  if (const auto& failure = builder.failure()) {
    throw FormatError(failure->message, {.file = options.file,
                                         .item = failure->path,
                                         .byteOffset = options.baseOffset + failure->offset});
  }
  if (!ok) {
    throw FormatError("invalid JSON", {.file = options.file, .byteOffset = options.baseOffset});
  }
  auto members = builder.takeMembers();
  for (auto& member : members) {
    member.offset += options.baseOffset;
    for (auto& [key, offset] : member.childKeys) offset += options.baseOffset;
  }
  return members;
}

}  // namespace dfi::tensorfile::detail
