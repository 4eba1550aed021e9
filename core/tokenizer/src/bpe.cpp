#include "bpe.h"

#include <algorithm>
#include <queue>

#include "dfi/base/utf8.h"
#include "dfi/tokenizer/byte_level.h"

namespace dfi::tokenizer::detail {
namespace {

// Pieces longer than this rarely repeat, and an unbounded key would let one huge input fill
// memory; the entry limit bounds the cache on endless distinct input.
constexpr std::size_t kMaxCachedPieceBytes = 96;
constexpr std::size_t kMaxCacheEntries = 200'000;

struct Symbol {
  std::int32_t id;
  std::int32_t prev;  // index of the previous live symbol, -1 at the start
  std::int32_t next;  // index of the next live symbol, -1 at the end
};

// A candidate merge of the live symbols at `left` and its successor. It is stale when either
// symbol changed since it was queued, which the stored ids reveal.
struct Candidate {
  std::int32_t rank;
  std::int32_t left;
  std::int32_t leftId;
  std::int32_t rightId;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

Bpe::Bpe(BpeOptions options, MergeTable merges, const TokenIds& vocab)
    : options_(options), merges_(std::move(merges)), vocab_(vocab) {}

void Bpe::encodePiece(std::string_view piece, std::vector<std::int32_t>& out) const {
  if (piece.empty()) return;
  const bool bytes = options_.alphabet == BpeOptions::Alphabet::Bytes;
  if (bytes && piece.size() == 1) {
    out.push_back(options_.byteIds[static_cast<std::uint8_t>(piece[0])]);
    return;
  }
  if (options_.ignoreMerges) {
    const auto it = bytes ? vocab_.find(byteLevelSpelling(piece)) : vocab_.find(piece);
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = piece.size() <= kMaxCachedPieceBytes;
  if (cacheable && lookupCache(piece, out)) return;
  const std::size_t start = out.size();
  std::vector<std::int32_t> ids;
  initialSymbols(piece, ids);
  merge(ids, out);
  if (cacheable) storeCache(piece, out.data() + start, out.size() - start);
}

void Bpe::initialSymbols(std::string_view piece, std::vector<std::int32_t>& ids) const {
  ids.reserve(piece.size());
  if (options_.alphabet == BpeOptions::Alphabet::Bytes) {
    for (const char c : piece) ids.push_back(options_.byteIds[static_cast<std::uint8_t>(c)]);
    return;
  }
  // One symbol per character, as HF's BPE::merge_word. Its order is kept exactly, including a
  // quirk: characters taken by byte fallback are added at once, while a pending unk is added
  // only when the next in-vocabulary character (or the end) comes.
  bool unkPending = false;
  for (std::size_t pos = 0; pos < piece.size();) {
    const std::size_t begin = pos;
    utf8::nextCodePoint(piece, pos);
    const std::string_view ch = piece.substr(begin, pos - begin);
    if (const auto it = vocab_.find(ch); it != vocab_.end()) {
      if (unkPending) ids.push_back(options_.unkId);
      unkPending = false;
      ids.push_back(it->second);
      continue;
    }
    if (options_.byteFallback &&
        std::all_of(ch.begin(), ch.end(), [&](char c) { return options_.byteIds[static_cast<std::uint8_t>(c)] >= 0; })) {
      for (const char c : ch) ids.push_back(options_.byteIds[static_cast<std::uint8_t>(c)]);
      continue;
    }
    if (options_.unkId < 0) continue;
    if (unkPending && !options_.fuseUnk) ids.push_back(options_.unkId);
    unkPending = true;
  }
  if (unkPending) ids.push_back(options_.unkId);
}

void Bpe::merge(std::vector<std::int32_t>& ids, std::vector<std::int32_t>& out) const {
  const auto n = static_cast<std::int32_t>(ids.size());
  if (n == 0) return;
  std::vector<Symbol> symbols(ids.size());
  for (std::int32_t i = 0; i < n; ++i) symbols[i] = {ids[i], i - 1, i + 1 < n ? i + 1 : -1};

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](std::int32_t left) {
    const std::int32_t right = symbols[left].next;
    if (right < 0) return;
    if (const auto m = merges_.find(symbols[left].id, symbols[right].id))
      queue.push({m->rank, left, symbols[left].id, symbols[right].id});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.left];
    // Merged-away symbols get id -1, so a stale candidate fails one of these checks.
    if (left.id != c.leftId || left.next < 0 || symbols[left.next].id != c.rightId) continue;
    const auto m = merges_.find(c.leftId, c.rightId);
    Symbol& right = symbols[left.next];
    left.id = m->merged;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    right.id = -1;
    if (left.prev >= 0) consider(left.prev);
    consider(c.left);
  }
  for (std::int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

bool Bpe::lookupCache(std::string_view piece, std::vector<std::int32_t>& out) const {
  const std::lock_guard lock(cacheMutex_);
  const auto it = cache_.find(piece);
  if (it == cache_.end()) return false;
  out.insert(out.end(), it->second.begin(), it->second.end());
  return true;
}

void Bpe::storeCache(std::string_view piece, const std::int32_t* ids, std::size_t count) const {
  const std::lock_guard lock(cacheMutex_);
  if (cache_.size() >= kMaxCacheEntries) return;
  cache_.emplace(std::string(piece), std::vector<std::int32_t>(ids, ids + count));
}

}  // namespace dfi::tokenizer::detail
