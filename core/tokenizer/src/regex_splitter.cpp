#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex_splitter.h"

#include <pcre2.h>

#include <vector>

#include "dfi/base/error.h"
#include "dfi/base/utf8.h"

namespace dfi::tokenizer::detail {

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

std::string pcreMessage(int errorCode) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(errorCode, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

// One match-data block per thread, grown on demand: allocating it per call would cost more
// than matching a short piece.
pcre2_match_data* threadMatchData() {
  struct Holder {
    pcre2_match_data* data = pcre2_match_data_create(16, nullptr);
    ~Holder() { pcre2_match_data_free(data); }
  };
  thread_local Holder holder;
  return holder.data;
}

// Character-class intersection, [A&&B] in Rust's regex (tiktoken) and Oniguruma (HF), as in
// Kimi's pattern [\p{Lu}\p{M}&&[^\p{Han}]]. PCRE2 before 10.45 has no such syntax and would
// read "&&[" as literal characters, so the class becomes look-aheads in front of its first part:
// (?:(?=B)A), one character either way. Classes without && are copied as they are.
class ClassTranslator {
 public:
  ClassTranslator(const std::string& pattern, const std::filesystem::path& source, const std::string& field)
      : p_(pattern), source_(source), field_(field) {}

  std::string run() {
    std::string out;
    for (std::size_t i = 0; i < p_.size();) {
      if (p_[i] == '\\') {
        out.append(p_, i, 2);
        i += 2;
      } else if (p_[i] == '[') {
        const std::size_t end = classEnd(i);
        out += translateClass(p_.substr(i, end - i));
        i = end;
      } else {
        out.push_back(p_[i++]);
      }
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValidationError("split regex: " + what, {.file = source_.string(), .item = field_});
  }

  // Index just past the class that opens at `open`; `splits` gets the top-level && positions.
  std::size_t classEnd(std::size_t open, std::vector<std::size_t>* splits = nullptr) const {
    std::size_t k = open + 1;
    if (k < p_.size() && p_[k] == '^') ++k;
    if (k < p_.size() && p_[k] == ']') ++k;  // a leading ] is a literal
    while (k < p_.size()) {
      if (p_[k] == '\\') {
        k += 2;
      } else if (p_[k] == '[' && k + 1 < p_.size() && p_[k + 1] == ':') {
        const std::size_t close = p_.find(":]", k + 2);
        if (close == std::string::npos) fail("unterminated POSIX class");
        k = close + 2;
      } else if (p_[k] == '[') {
        k = classEnd(k);
      } else if (p_[k] == ']') {
        return k + 1;
      } else if (p_[k] == '&' && k + 1 < p_.size() && p_[k + 1] == '&') {
        if (splits) splits->push_back(k);
        k += 2;
      } else {
        ++k;
      }
    }
    fail("unterminated character class");
  }

  std::string translateClass(const std::string& cls) const {
    ClassTranslator inner(cls, source_, field_);
    std::vector<std::size_t> splits;
    inner.classEnd(0, &splits);
    if (splits.empty()) return cls;
    if (cls[1] == '^') fail("an intersection (&&) in a negated class is not supported");
    std::vector<std::string> parts;
    std::size_t from = 1;
    for (const std::size_t at : splits) {
      parts.push_back(cls.substr(from, at - from));
      from = at + 2;
    }
    parts.push_back(cls.substr(from, cls.size() - 1 - from));
    std::string out = "(?:";
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::string part = parts[i];
      // A part that is one nested class stays as it is; loose items become a class.
      if (!(part.size() >= 2 && part.front() == '[' && ClassTranslator(part, source_, field_).classEnd(0) == part.size()))
        part = "[" + part + "]";
      part = ClassTranslator(part, source_, field_).run();
      if (i == 0) parts[0] = part;
      else out += "(?=" + part + ")";
    }
    return out + parts[0] + ")";
  }

  const std::string& p_;
  const std::filesystem::path& source_;
  const std::string& field_;
};

bool isPcreScript(const std::string& name) {
  const std::string probe = "\\p{sc:" + name + "}";
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(probe.data()), probe.size(), PCRE2_UTF | PCRE2_UCP,
                                   &errorCode, &errorOffset, nullptr);
  pcre2_code_free(code);
  return code != nullptr;
}

// A bare script name, \p{Han}, means the Script property in tiktoken's Rust regex and in HF's
// Oniguruma, but Script_Extensions in PCRE2 since 10.40, where e.g. the ideographic full stop
// U+3002 (script Common) is Han too. \p{sc:Han} is the Script property in PCRE2.
std::string scriptsAsScriptProperty(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] != '\\' || i + 1 >= pattern.size()) {
      out.push_back(pattern[i++]);
      continue;
    }
    const char kind = pattern[i + 1];
    const std::size_t close = pattern.find('}', i);
    if ((kind == 'p' || kind == 'P') && i + 2 < pattern.size() && pattern[i + 2] == '{' && close != std::string::npos) {
      const std::string name = pattern.substr(i + 3, close - i - 3);
      if (name.find_first_of(":=^") == std::string::npos && name.size() > 2 && isPcreScript(name)) {
        out += std::string("\\") + kind + "{sc:" + name + "}";
        i = close + 1;
        continue;
      }
    }
    out.append(pattern, i, 2);
    i += 2;
  }
  return out;
}

}  // namespace

RegexSplitter::RegexSplitter(const std::string& pattern, const std::filesystem::path& sourceFile,
                             const std::string& field)
    : compiled_(std::make_unique<Compiled>()) {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  // UCP makes \s, \d, \w and POSIX classes Unicode-aware, as in the Oniguruma engine HF uses.
  const std::string pcrePattern = scriptsAsScriptProperty(ClassTranslator(pattern, sourceFile, field).run());
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcrePattern.data()), pcrePattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
  if (!compiled_->code)
    throw ValidationError("split regex does not compile at pattern offset " + std::to_string(errorOffset) + ": " +
                              pcreMessage(errorCode),
                          {.file = sourceFile.string(), .item = field});
  // Without JIT (unsupported CPU or build) the interpreter gives the same results, slower.
  compiled_->jit = pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE) == 0;
}

RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

void RegexSplitter::split(std::string_view text, const std::function<void(std::string_view, bool)>& onPiece) const {
  pcre2_match_data* match = threadMatchData();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t gapStart = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    // The text was validated (or produced by NFC), so PCRE2 need not check it again.
    const int rc = compiled_->jit
                       ? pcre2_jit_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match, nullptr)
                       : pcre2_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw FormatError("split regex failed while matching: " + pcreMessage(rc), {.item = "pre_tokenizer"});
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
    const std::size_t begin = ovector[0];
    const std::size_t end = ovector[1];
    if (end == begin) {
      // An empty match produces no piece; step over one character to make progress.
      if (begin >= text.size()) break;
      pos = begin;
      utf8::nextCodePoint(text, pos);
      continue;
    }
    if (begin > gapStart) onPiece(text.substr(gapStart, begin - gapStart), false);
    onPiece(text.substr(begin, end - begin), true);
    gapStart = pos = end;
  }
  if (gapStart < text.size()) onPiece(text.substr(gapStart), false);
}

}  // namespace dfi::tokenizer::detail
