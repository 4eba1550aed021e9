#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex_splitter.h"

#include <pcre2.h>

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

}  // namespace

RegexSplitter::RegexSplitter(const std::string& pattern, const std::filesystem::path& sourceFile,
                             const std::string& field)
    : compiled_(std::make_unique<Compiled>()) {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  // UCP makes \s, \d, \w and POSIX classes Unicode-aware, as in the Oniguruma engine HF uses.
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
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

void RegexSplitter::split(std::string_view text, const std::function<void(std::string_view)>& onPiece) const {
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
    if (begin > gapStart) onPiece(text.substr(gapStart, begin - gapStart));
    onPiece(text.substr(begin, end - begin));
    gapStart = pos = end;
  }
  if (gapStart < text.size()) onPiece(text.substr(gapStart));
}

}  // namespace dfi::tokenizer::detail
