#include "dfi/protocol/record_codec.h"

#include <array>

#include "json_fields.h"

namespace dfi::protocol {
namespace {

using nlohmann::json;
using detail::JsonFields;
namespace s = session;

json identityToJson(const s::ModelIdentity& m) {
  return {{"path", m.path}, {"config_json", m.configJson}, {"weights_sha256", m.weightsSha256}};
}

s::ModelIdentity identityFromJson(const JsonFields& f, const char* field) {
  const auto j = f.get<json>(field);
  const JsonFields inner(j, "", field);
  return {inner.get<std::string>("path"), inner.get<std::string>("config_json"),
          inner.get<std::string>("weights_sha256")};
}

json toJson(const s::RunRecord& r) {
  return {{"run_id", r.runId},         {"name", r.name},
          {"target", identityToJson(r.target)}, {"drafter", identityToJson(r.drafter)},
          {"engine_version", r.engineVersion}, {"device", r.device},
          {"dtype", r.dtype},          {"block_size", r.blockSize},
          {"top_k", r.topK},           {"settings_json", r.settingsJson},
          {"shard", r.shard},          {"started_at", r.startedAt},
          {"finished_at", r.finishedAt}, {"timings_json", r.timingsJson}};
}

s::RunRecord runFromJson(const JsonFields& f) {
  s::RunRecord r;
  r.runId = f.get<s::RunId>("run_id");
  r.name = f.get<std::string>("name");
  r.target = identityFromJson(f, "target");
  r.drafter = identityFromJson(f, "drafter");
  r.engineVersion = f.get<std::string>("engine_version");
  r.device = f.get<std::string>("device");
  r.dtype = f.get<std::string>("dtype");
  r.blockSize = f.get<std::int32_t>("block_size");
  r.topK = f.get<std::int32_t>("top_k");
  r.settingsJson = f.get<std::string>("settings_json");
  r.shard = f.get<std::string>("shard");
  r.startedAt = f.get<double>("started_at");
  r.finishedAt = f.get<double>("finished_at");
  r.timingsJson = f.get<std::string>("timings_json");
  return r;
}

json toJson(const s::PromptRecord& p) {
  return {{"run_id", p.runId},   {"prompt_id", p.promptId},           {"dataset", p.dataset},
          {"turn", p.turn},      {"text", p.text},                    {"prompt_tokens", p.promptTokens},
          {"completion_tokens", p.completionTokens}};
}

s::PromptRecord promptFromJson(const JsonFields& f) {
  return {f.get<s::RunId>("run_id"),       f.get<s::PromptId>("prompt_id"),
          f.get<std::string>("dataset"),   f.get<std::int32_t>("turn"),
          f.get<std::string>("text"),      f.get<std::vector<s::TokenId>>("prompt_tokens"),
          f.get<std::int32_t>("completion_tokens")};
}

json toJson(const s::StepRecord& r) {
  return {{"step_id", r.stepId},
          {"run_id", r.runId},
          {"prompt_id", r.promptId},
          {"step_index", r.stepIndex},
          {"mode", s::stepModeName(r.mode)},
          {"anchor_position", r.anchorPosition},
          {"anchor_token", r.anchorToken},
          {"draft_tokens", r.draftTokens},
          {"target_tokens", r.targetTokens},
          {"accepted_count", r.acceptedCount},
          {"bonus_token", r.bonusToken},
          {"top_k_ids", r.topKIds},
          {"top_k_probs", r.topKProbs},
          {"garble_flags", r.garbleFlags},
          {"mask_variant", r.maskVariant}};
}

s::StepMode stepModeFromName(const JsonFields& f) {
  const auto name = f.get<std::string>("mode");
  for (s::StepMode m : {s::StepMode::Live, s::StepMode::TeacherForced, s::StepMode::DDTree})
    if (s::stepModeName(m) == name) return m;
  f.fail("mode", "unknown step mode '" + name + "'");
}

s::StepRecord stepFromJson(const JsonFields& f) {
  s::StepRecord r;
  r.stepId = f.get<s::StepId>("step_id");
  r.runId = f.get<s::RunId>("run_id");
  r.promptId = f.get<s::PromptId>("prompt_id");
  r.stepIndex = f.get<std::int32_t>("step_index");
  r.mode = stepModeFromName(f);
  r.anchorPosition = f.get<std::int64_t>("anchor_position");
  r.anchorToken = f.get<s::TokenId>("anchor_token");
  r.draftTokens = f.get<std::vector<s::TokenId>>("draft_tokens");
  r.targetTokens = f.get<std::vector<s::TokenId>>("target_tokens");
  r.acceptedCount = f.get<std::int32_t>("accepted_count");
  r.bonusToken = f.get<s::TokenId>("bonus_token");
  r.topKIds = f.get<std::vector<s::TokenId>>("top_k_ids");
  r.topKProbs = f.get<std::vector<float>>("top_k_probs");
  r.garbleFlags = f.get<std::vector<std::uint8_t>>("garble_flags");
  r.maskVariant = f.get<std::string>("mask_variant");
  return r;
}

json toJson(const s::TreeRecord& t) {
  return {{"step_id", t.stepId},       {"node_tokens", t.nodeTokens}, {"node_log_probs", t.nodeLogProbs},
          {"parents", t.parents},      {"accepted_path", t.acceptedPath}};
}

s::TreeRecord treeFromJson(const JsonFields& f) {
  return {f.get<s::StepId>("step_id"), f.get<std::vector<s::TokenId>>("node_tokens"),
          f.get<std::vector<float>>("node_log_probs"), f.get<std::vector<std::int32_t>>("parents"),
          f.get<std::vector<std::int32_t>>("accepted_path")};
}

json toJson(const s::StatisticRecord& st) {
  return {{"run_id", st.runId}, {"step_id", st.stepId}, {"name", st.name},
          {"layer", st.layer},  {"head", st.head},      {"values", st.values}};
}

s::StatisticRecord statisticFromJson(const JsonFields& f) {
  return {f.get<s::RunId>("run_id"), f.get<s::StepId>("step_id"), f.get<std::string>("name"),
          f.get<std::int32_t>("layer"), f.get<std::int32_t>("head"), f.get<std::vector<float>>("values")};
}

json toJson(const s::TensorInfo& t) {
  return {{"tensor_id", t.tensorId}, {"run_id", t.runId},  {"step_id", t.stepId},
          {"name", t.name},          {"layer", t.layer},   {"head", t.head},
          {"dtype", static_cast<std::int32_t>(t.dtype)}, {"shape", t.shape},
          {"layout", t.layout}};
}

s::TensorRecord tensorFromFrame(const JsonFields& f, const std::string& payload) {
  s::TensorRecord t;
  t.info.tensorId = f.get<s::TensorId>("tensor_id");
  t.info.runId = f.get<s::RunId>("run_id");
  t.info.stepId = f.get<s::StepId>("step_id");
  t.info.name = f.get<std::string>("name");
  t.info.layer = f.get<std::int32_t>("layer");
  t.info.head = f.get<std::int32_t>("head");
  const auto dtype = f.get<std::int32_t>("dtype");
  if (dtype < 0 || dtype > static_cast<std::int32_t>(s::TensorDType::I32))
    f.fail("dtype", "unknown tensor dtype " + std::to_string(dtype));
  t.info.dtype = static_cast<s::TensorDType>(dtype);
  t.info.shape = f.get<std::vector<std::int64_t>>("shape");
  t.info.layout = f.get<std::string>("layout");
  std::size_t expected = s::tensorDTypeSize(t.info.dtype);
  for (std::int64_t d : t.info.shape) {
    if (d < 0) f.fail("shape", "negative dimension");
    expected *= static_cast<std::size_t>(d);
  }
  if (payload.size() != expected)
    f.fail("shape", "payload has " + std::to_string(payload.size()) + " bytes, shape x dtype needs " +
                        std::to_string(expected));
  t.data.assign(payload.begin(), payload.end());
  return t;
}

// A token's raw bytes may be a partial UTF-8 sequence, which a JSON string cannot carry, so
// they travel as hex: entries are [id, raw_hex, display].
std::string toHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

std::string fromHex(const JsonFields& f, std::string_view hex) {
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    f.fail("tokens", "raw bytes must be lowercase hex");
  };
  if (hex.size() % 2) f.fail("tokens", "raw bytes must be lowercase hex");
  std::string bytes(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return bytes;
}

json toJson(const TokenStrings& tokens) {
  json list = json::array();
  for (const auto& t : tokens) list.push_back({t.tokenId, toHex(t.raw), t.display});
  return {{"tokens", list}};
}

TokenStrings tokensFromJson(const JsonFields& f) {
  TokenStrings out;
  for (const auto& entry : f.get<json>("tokens")) {
    if (!entry.is_array() || entry.size() != 3) f.fail("tokens", "entries must be [id, raw_hex, display]");
    out.push_back({entry[0].get<s::TokenId>(), fromHex(f, entry[1].get<std::string>()),
                   entry[2].get<std::string>()});
  }
  return out;
}

constexpr std::array<const char*, 7> kTypeNames{"run", "prompt", "step", "tree", "statistic", "tensor", "tokens"};

}  // namespace

Frame encodeRecord(const Record& record) {
  Frame frame;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, s::TensorRecord>) {
          frame.header = toJson(r.info);
          frame.payload.assign(r.data.begin(), r.data.end());
        } else {
          frame.header = toJson(r);
        }
      },
      record);
  frame.header["type"] = kTypeNames[record.index()];
  return frame;
}

bool isRecordFrame(const Frame& frame) {
  const auto it = frame.header.find("type");
  if (it == frame.header.end() || !it->is_string()) return false;
  for (const char* name : kTypeNames)
    if (*it == name) return true;
  return false;
}

Record decodeRecord(const Frame& frame, std::string_view streamName) {
  const JsonFields typeField(frame.header, streamName, "record");
  const auto type = typeField.get<std::string>("type");
  const JsonFields f(frame.header, streamName, type);
  try {
    if (type == "run") return runFromJson(f);
    if (type == "prompt") return promptFromJson(f);
    if (type == "step") return stepFromJson(f);
    if (type == "tree") return treeFromJson(f);
    if (type == "statistic") return statisticFromJson(f);
    if (type == "tensor") return tensorFromFrame(f, frame.payload);
    if (type == "tokens") return tokensFromJson(f);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(e.what(), {.file = std::string(streamName), .item = type});
  }
  typeField.fail("type", "not a record type: '" + type + "'");
}

}  // namespace dfi::protocol
