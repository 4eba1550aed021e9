#include "dfi/analysis/training_log.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"

namespace dfi::analysis {
namespace fs = std::filesystem;
namespace {

// --- TFRecord framing: u64 length, u32 masked CRC-32C of it, data, u32 masked CRC-32C of data.

std::uint32_t crc32c(std::span<const std::uint8_t> bytes) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0x82f63b78u ^ (c >> 1) : c >> 1;  // Castagnoli, reflected
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xffffffffu;
  for (std::uint8_t b : bytes) crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

std::uint32_t maskedCrc(std::span<const std::uint8_t> bytes) {
  const std::uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

template <typename T>
T littleEndian(const std::uint8_t* p) {
  std::uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, p, sizeof bytes);
  if constexpr (std::endian::native == std::endian::big) std::reverse(std::begin(bytes), std::end(bytes));
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

// --- the few protobuf messages an event file's scalars need (wire format, no generated code).

struct Wire {
  std::span<const std::uint8_t> bytes;
  std::size_t at = 0;
  const std::string& file;
  std::uint64_t base;  // the message's offset in the file, for errors

  [[noreturn]] void fail(const std::string& why) const {
    throw FormatError("TensorBoard event: " + why, {.file = file, .byteOffset = static_cast<std::int64_t>(base + at)});
  }
  bool done() const { return at >= bytes.size(); }
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done()) fail("varint past the end of its message");
      const std::uint8_t b = bytes[at++];
      value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return value;
    }
    fail("varint longer than 10 bytes");
  }
  std::span<const std::uint8_t> take(std::size_t n) {
    if (n > bytes.size() - at) fail("field of " + std::to_string(n) + " bytes past the end of its message");
    const auto out = bytes.subspan(at, n);
    at += n;
    return out;
  }
  // Calls visit(field, wireType, payload) for each field; varints come back as their 8 bytes.
  template <typename Visit>
  void fields(Visit&& visit) {
    while (!done()) {
      const std::uint64_t key = varint();
      const int field = static_cast<int>(key >> 3), type = static_cast<int>(key & 7);
      const std::size_t start = at;
      switch (type) {
        case 0: {
          const std::uint64_t v = varint();
          visit(field, type, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(&v), sizeof v), start);
          break;
        }
        case 1: visit(field, type, take(8), start); break;
        case 2: visit(field, type, take(varint()), start); break;
        case 5: visit(field, type, take(4), start); break;
        default: fail("unsupported wire type " + std::to_string(type));
      }
    }
  }
};

std::optional<double> tensorScalar(Wire tensor) {
  std::optional<double> value;
  int dtype = 0;  // DT_FLOAT 1, DT_DOUBLE 2
  std::span<const std::uint8_t> content;
  tensor.fields([&](int field, int type, std::span<const std::uint8_t> p, std::size_t) {
    if (field == 1 && type == 0) dtype = static_cast<int>(littleEndian<std::uint64_t>(p.data()));
    else if (field == 4 && type == 2) content = p;
    else if (field == 5 && (type == 5 || type == 2) && p.size() >= 4) value = littleEndian<float>(p.data());
    else if (field == 6 && (type == 1 || type == 2) && p.size() >= 8) value = littleEndian<double>(p.data());
  });
  if (!value && dtype == 1 && content.size() == 4) value = littleEndian<float>(content.data());
  if (!value && dtype == 2 && content.size() == 8) value = littleEndian<double>(content.data());
  return value;
}

void readEvent(Wire event, TrainingLog& log) {
  double wallTime = 0;
  std::int64_t step = 0;
  std::vector<std::pair<std::string, double>> values;
  event.fields([&](int field, int type, std::span<const std::uint8_t> p, std::size_t start) {
    if (field == 1 && type == 1) wallTime = littleEndian<double>(p.data());
    else if (field == 2 && type == 0) step = static_cast<std::int64_t>(littleEndian<std::uint64_t>(p.data()));
    else if (field == 5 && type == 2) {
      Wire summary{p, 0, event.file, event.base + start};
      summary.fields([&](int f, int t, std::span<const std::uint8_t> v, std::size_t vStart) {
        if (f != 1 || t != 2) return;
        std::string tag;
        std::optional<double> value;
        Wire(v, 0, event.file, summary.base + vStart).fields([&](int vf, int vt, std::span<const std::uint8_t> q, std::size_t qStart) {
          if (vf == 1 && vt == 2) tag.assign(q.begin(), q.end());
          else if (vf == 2 && vt == 5) value = littleEndian<float>(q.data());
          else if (vf == 8 && vt == 2) value = tensorScalar(Wire{q, 0, event.file, summary.base + vStart + qStart});
        });
        if (!tag.empty() && value) values.emplace_back(std::move(tag), *value);
      });
    }
  });
  for (auto& [tag, value] : values) log.scalars[tag].push_back({step, value, wallTime});
}

void readEventFile(const fs::path& path, TrainingLog& log) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read the TensorBoard event file", {.file = path.string()});
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string file = path.string();
  std::size_t at = 0;
  while (bytes.size() - at >= 12) {
    const std::uint64_t length = littleEndian<std::uint64_t>(bytes.data() + at);
    if (littleEndian<std::uint32_t>(bytes.data() + at + 8) != maskedCrc({bytes.data() + at, 8}))
      throw FormatError("TensorBoard event: record length fails its CRC-32C", {.file = file, .byteOffset = static_cast<std::int64_t>(at)});
    if (length > bytes.size() - at - 12 || bytes.size() - at - 12 - length < 4) break;  // cut short: still being written
    const std::span<const std::uint8_t> data(bytes.data() + at + 12, length);
    if (littleEndian<std::uint32_t>(data.data() + length) != maskedCrc(data))
      throw FormatError("TensorBoard event: record data fails its CRC-32C", {.file = file, .byteOffset = static_cast<std::int64_t>(at + 12)});
    readEvent(Wire{data, 0, file, at + 12}, log);
    at += 12 + length + 4;
  }
  log.files.push_back(path);
}

// --- JSON: lines of {"step": N, ...numbers, nested objects joined with "/"}; trainer_state.json.

void addNumbers(const nlohmann::json& object, const std::string& prefix, std::int64_t step, TrainingLog& log) {
  for (const auto& [key, value] : object.items()) {
    const std::string tag = prefix.empty() ? key : prefix + "/" + key;
    if (value.is_object()) addNumbers(value, tag, step, log);
    else if (value.is_number() && key != "step" && key != "global_step") log.scalars[tag].push_back({step, value.get<double>(), 0});
  }
}

std::optional<std::int64_t> stepOf(const nlohmann::json& object) {
  for (const char* key : {"step", "global_step"})
    if (object.contains(key) && object[key].is_number_integer()) return object[key].get<std::int64_t>();
  return std::nullopt;
}

void readJsonLines(const fs::path& path, TrainingLog& log) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read the training log", {.file = path.string()});
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
      if (in.peek() == EOF) break;  // the last line of a log still being written
      throw FormatError("line " + std::to_string(number) + " is not a JSON object", {.file = path.string()});
    }
    if (const auto step = stepOf(object)) addNumbers(object, "", *step, log);
  }
  log.files.push_back(path);
}

void readTrainerState(const fs::path& path, TrainingLog& log) {
  std::ifstream in(path);
  const nlohmann::json state = nlohmann::json::parse(in, nullptr, false);
  if (state.is_discarded() || !state.is_object())
    throw FormatError("trainer_state.json is not a JSON object", {.file = path.string()});
  for (const auto& entry : state.value("log_history", nlohmann::json::array()))
    if (const auto step = entry.is_object() ? stepOf(entry) : std::nullopt) addNumbers(entry, "", *step, log);
  log.files.push_back(path);
}

void readFile(const fs::path& path, TrainingLog& log) {
  const std::string name = path.filename().string();
  if (name.starts_with("events.out.tfevents.")) readEventFile(path, log);
  else if (path.extension() == ".jsonl") readJsonLines(path, log);
  else if (name == "trainer_state.json") readTrainerState(path, log);
  else throw UsageError("not a training log (events.out.tfevents.*, *.jsonl or trainer_state.json)", {.file = path.string()});
}

}  // namespace

TrainingLog readTrainingLog(const fs::path& fileOrFolder) {
  TrainingLog log;
  std::error_code ec;
  if (!fs::is_directory(fileOrFolder, ec)) {
    readFile(fileOrFolder, log);
  } else {
    std::vector<fs::path> files;
    // Each HF Trainer checkpoint repeats the run's history in its trainer_state.json: the newest
    // one is the log, read when the folder has no event file or JSON lines.
    fs::path newestState;
    fs::file_time_type newestTime{};
    for (auto it = fs::recursive_directory_iterator(fileOrFolder, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!it->is_regular_file()) continue;
      if (name.starts_with("events.out.tfevents.") || it->path().extension() == ".jsonl") files.push_back(it->path());
      if (name == "trainer_state.json" && (newestState.empty() || it->last_write_time() > newestTime)) {
        newestState = it->path();
        newestTime = it->last_write_time();
      }
    }
    if (ec) throw IoError("cannot list the training log folder: " + ec.message(), {.file = fileOrFolder.string()});
    if (files.empty() && !newestState.empty()) files.push_back(newestState);
    std::ranges::sort(files);
    for (const fs::path& f : files) readFile(f, log);
  }
  for (auto& [tag, points] : log.scalars)
    std::ranges::stable_sort(points, {}, &LoggedPoint::step);
  return log;
}

namespace {

// A speculators log: it has an eal, and its accept_len is the analytic one, not SpecForge's.
bool isSpeculatorsLog(const TrainingLog& log) {
  return std::ranges::any_of(std::array{"val/eal_epoch", "train/eal", "eal"},
                             [&](const char* tag) { return log.scalars.contains(tag); });
}

}  // namespace

std::optional<LoggedAcceptance> loggedAcceptance(const TrainingLog& log) {
  // Validation before training numbers, each package's name for it; speculators' eal before any
  // accept_len, which in its log is the analytic figure (loggedAnalyticAcceptance), not SpecForge's.
  static const std::array<LoggedAcceptance, 6> known{{
      {"val/eal_epoch", 0, "speculators' validation eal (accepted drafts + the bonus token)"},
      {"eval/simulated_acc_len", 1, "SpecForge's simulated_acc_len (accepted drafts; + 1 for tau)"},
      {"train/eal", 0, "speculators' training eal (accepted drafts + the bonus token)"},
      {"eal", 0, "eal (accepted drafts + the bonus token, as speculators counts it)"},
      {"train/accept_len", 1, "SpecForge's accept_len (accepted drafts; + 1 for tau)"},
      {"accept_len", 1, "accept_len (accepted drafts, as SpecForge counts it; + 1 for tau)"},
  }};
  const bool speculators = isSpeculatorsLog(log);
  for (const LoggedAcceptance& candidate : known)
    if (log.scalars.contains(candidate.tag) && !(speculators && candidate.toTau == 1)) return candidate;
  return std::nullopt;
}

std::optional<LoggedAcceptance> loggedAnalyticAcceptance(const TrainingLog& log) {
  if (!isSpeculatorsLog(log)) return std::nullopt;
  static const std::array<LoggedAcceptance, 3> known{{
      {"val/accept_len_epoch", 0, "speculators' validation accept_len (T=1, from 1 - TV; the bonus counted)"},
      {"train/accept_len", 0, "speculators' training accept_len (T=1, from 1 - TV; the bonus counted)"},
      {"accept_len", 0, "speculators' accept_len (T=1, from 1 - TV; the bonus counted)"},
  }};
  for (const LoggedAcceptance& candidate : known)
    if (log.scalars.contains(candidate.tag)) return candidate;
  return std::nullopt;
}

std::optional<LoggedPoint> loggedAt(const TrainingLog& log, const std::string& tag, std::int64_t step,
                                    std::int64_t window) {
  const auto it = log.scalars.find(tag);
  if (it == log.scalars.end()) return std::nullopt;
  std::optional<LoggedPoint> best;
  for (const LoggedPoint& p : it->second) {
    const std::int64_t distance = std::abs(p.step - step);
    if (distance <= window && (!best || distance < std::abs(best->step - step))) best = p;
  }
  return best;
}

}  // namespace dfi::analysis
