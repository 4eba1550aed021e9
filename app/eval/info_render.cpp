// Human-readable form of the `info` documents built in info_report.cpp.

#include <cstdio>
#include <sstream>

#include "dfi/engine/memory_plan.h"
#include "info_report.h"

namespace dfi::eval {
namespace {

using nlohmann::json;

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string count(std::uint64_t n) {
  if (n >= 1'000'000'000) return format("%.2f B", n / 1e9);
  if (n >= 1'000'000) return format("%.1f M", n / 1e6);
  if (n >= 1'000) return format("%.1f K", n / 1e3);
  return std::to_string(n);
}

std::string bytes(const json& n) { return engine::byteSizeText(n.get<std::uint64_t>()); }

std::string number(const json& v) {
  if (v.is_number_float()) return format("%g", v.get<double>());
  return v.dump();
}

std::string ints(const json& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : ", ") + v.dump();
  return "[" + out + "]";
}

std::string layerCounts(const json& layerTypes) {
  std::string out;
  for (const auto& [name, n] : layerTypes["counts"].items()) out += (out.empty() ? "" : ", ") + n.dump() + " " + name;
  return out;
}

std::string rope(const json& r) {
  std::string out = r["type"].get<std::string>() + ", theta " + number(r["theta"]) + ", rotary dim " +
                    r["rotary_dim"].dump();
  if (r.contains("factor"))
    out += ", factor " + number(r["factor"]) + " over " + number(r["original_max_position_embeddings"]) +
           " positions, attention scaling " + number(r["attention_scaling"]);
  return out;
}

void geometry(std::ostream& out, const json& g, bool drafter) {
  out << "  layers     " << g["num_hidden_layers"] << " (" << layerCounts(g["layer_types"]) << ")";
  if (g.contains("sliding_window")) out << ", sliding window " << g["sliding_window"];
  out << "\n  widths     hidden " << g["hidden_size"] << ", intermediate " << g["intermediate_size"] << ", heads "
      << g["num_attention_heads"] << " q / " << g["num_key_value_heads"] << " kv x " << g["head_dim"] << ", vocab "
      << g["vocab_size"] << "\n";
  if (g.contains("linear_attention")) {
    const json& l = g["linear_attention"];
    out << "  deltanet   key heads " << l["key_heads"] << " x " << l["key_head_dim"] << ", value heads "
        << l["value_heads"] << " x " << l["value_head_dim"] << ", conv kernel " << l["conv_kernel"] << "\n";
  }
  if (g.contains("moe")) {
    const json& m = g["moe"];
    out << "  moe        " << m["experts"] << " experts, " << m["experts_per_token"] << " per token"
        << (m.value("norm_topk_prob", true) ? " (weights renormalised)" : "") << ", width "
        << m["moe_intermediate_size"] << " (shared " << m["shared_expert_intermediate_size"] << "), "
        << m.value("sparse_layers", json::array()).size() << " sparse layers\n";
  }
  if (g.contains("attention_sinks") || g.contains("mlp_bias") || g.contains("quantization")) {
    std::string extras;
    if (g.contains("attention_sinks")) extras += "attention sinks";
    if (g.contains("mlp_bias")) extras += std::string(extras.empty() ? "" : ", ") + "MLP biases";
    if (g.contains("quantization"))
      extras += std::string(extras.empty() ? "" : ", ") + g["quantization"].get<std::string>() +
                (g["quantization"] == "mxfp4" ? " experts" : " weights") + " (dequantised at load)";
    out << "  features   " << extras << "\n";
  }
  out << "  rope       " << rope(g["rope"]) << "\n";
  if (drafter) {
    out << "  dflash     block size " << g["block_size"] << ", taps " << ints(g["target_layer_ids"]) << " ("
        << g["target_layer_ids_source"].get<std::string>() << "), mask token "
        << (g["mask_token_id"].is_null() ? "absent" : g["mask_token_id"].dump()) << "\n";
    const std::string version =
        g.contains("speculators") ? " " + g["speculators"]["speculators_model_type"].get<std::string>() + " " +
                                        g["speculators"]["speculators_version"].get<std::string>()
                                  : "";
    out << "  format     " << g.value("format", std::string("z-lab")) << version << ", vocabulary "
        << (g.value("draft_vocab_size", json()).is_null()
                ? std::string("the target's (its embedding and LM head)")
                : g["draft_vocab_size"].dump() + " draft ids of " + g["vocab_size"].dump() +
                      " (own LM head, mapped to target ids by d2t)")
        << "\n";
    if (g.contains("speculators")) {
      const json& s = g["speculators"];
      out << "  stated     aux_hidden_state_layer_ids "
          << ints(s["aux_hidden_state_layer_ids"]) << ", "
          << (s["sliding_window_non_causal"].get<bool>() ? "sliding layers non-causal" : "sliding layers causal")
          << ", proposal " << s["proposal_type"].get<std::string>() << " of "
          << (s["speculative_tokens"].is_null() ? "?" : s["speculative_tokens"].dump()) << " tokens, verifier "
          << (s["verifier_name_or_path"].get<std::string>().empty() ? std::string("unnamed")
                                                                     : s["verifier_name_or_path"].get<std::string>())
          << "\n";
    }
    if (g.contains("dflash2")) {
      const json& d = g["dflash2"];
      out << "  dflash2    convolutions of " << d["conv_kernel_size"] << " taps in groups of " << d["conv_group_size"]
          << ", candidate selector over the top " << d["selector_top_k"] << " (rank " << d["selector_rank"] << ")\n";
    }
    if (g.value("sample_from_anchor", false))
      out << "  drafts     " << g["drafts_per_block"] << " a block, from every slot (sample_from_anchor: the anchor's "
          << "slot drafts the next token)\n";
    if (g.contains("conventions")) {
      out << "  conventions, as stated here and as another format's reader would take them:\n";
      for (const json& c : g["conventions"])
        out << "    " << c["field"].get<std::string>() << std::string(12 - std::min<std::size_t>(11, c["field"].get<std::string>().size()), ' ')
            << c["stated"].get<std::string>() << "\n" << std::string(16, ' ') << c["other_readers"].get<std::string>() << "\n";
    }
    if (g.contains("dspark")) {
      const json& d = g["dspark"];
      const bool markov = d["markov_rank"].get<int>() > 0;
      out << "  dspark     " << (markov ? d["markov_head_type"].get<std::string>() + " Markov head of rank " + d["markov_rank"].dump()
                                        : std::string("no Markov head"))
          << ", " << (d["enable_confidence_head"].get<bool>()
                          ? std::string("confidence head") +
                                (d["confidence_head_with_markov"].get<bool>() ? " (with the previous token)" : "")
                          : std::string("no confidence head"))
          << (d["markov_head_type"] == "rnn" && markov ? ", rnn state from the " + d["rnn_state_starts"].get<std::string>()
                                                       : std::string())
          << "\n";
    }
  } else {
    out << "  tokens     eos " << ints(g["eos_token_ids"]) << ", tied embeddings "
        << (g["tie_word_embeddings"].get<bool>() ? "yes" : "no") << ", max positions "
        << g["max_position_embeddings"] << "\n";
  }
}

void weights(std::ostream& out, const json& w) {
  if (w.is_null()) {
    out << "  weights    none (no model.safetensors or index next to the config)\n";
    return;
  }
  out << "  weights    " << count(w["parameters"]) << " parameters, " << bytes(w["bytes"]) << " in "
      << w["tensors"] << " tensors, " << w["shards"] << " shard(s)";
  if (w["skipped_parameters"].get<std::uint64_t>() > 0)
    out << "; " << count(w["skipped_parameters"]) << " of them vision/MTP, unused by the text engine";
  out << "\n";
  for (const auto& t : w["dtypes"])
    out << "    " << t["dtype"].get<std::string>() << ": " << t["tensors"] << " tensors, " << count(t["elements"])
        << " values, " << bytes(t["bytes"]) << "\n";
  out << "  identity   " << w["header_sha256"].get<std::string>() << "\n";
}

void memory(std::ostream& out, const json& plan) {
  out << "  placement  " << count(plan["total_parameters"]) << " parameters, " << count(plan["active_parameters"])
      << " active per token; weights in " << plan["dtype"].get<std::string>()
      << " (activations and caches come on top):\n";
  for (const auto& d : plan["devices"]) {
    out << "    " << d["device"].get<std::string>() << ": " << bytes(d["bytes"]) << ", layers " << d["first_layer"]
        << "-" << d["first_layer"].get<int>() + d["layers"].get<int>() - 1
        << (d["embeddings"].get<bool>() ? ", embeddings" : "") << (d["head"].get<bool>() ? ", head" : "");
    if (d["available"].is_null())
      out << "; free memory unknown here\n";
    else
      out << "; " << bytes(d["available"]) << " available (" << d["available_source"].get<std::string>() << ")\n";
  }
  if (!plan["fits"].get<bool>()) out << "  DOES NOT FIT: " << plan["refusal"].get<std::string>() << "\n";
}

}  // namespace

std::string renderModel(const json& m) {
  std::ostringstream out;
  const bool drafter = m["kind"] == "drafter";
  out << m["path"].get<std::string>() << ": " << m["kind"].get<std::string>();
  if (!m["geometry"].is_null()) {
    const json& g = m["geometry"];
    if (!drafter) out << ", " << g["family"].get<std::string>();
    out << " (model_type " << g["model_type"].get<std::string>();
    for (const auto& a : g["architectures"]) out << ", " << a.get<std::string>();
    out << ")\n";
    geometry(out, g, drafter);
  } else {
    out << "\n";
  }
  weights(out, m["weights"]);
  if (m.contains("memory")) memory(out, m["memory"]);
  if (const json& layout = m["weight_layout"]; layout.is_null()) {
    if (!m["weights"].is_null() && m["validation"]["valid"].get<bool>())
      out << "  layout     not checked (" << (m["geometry"].contains("quantization") ? "quantised weights are checked at load"
                                                                                        : "no fixed tensor layout known for this family")
          << ")\n";
  } else {
    const json& issues = layout["issues"];
    if (issues.empty()) {
      out << "  layout     all " << layout["expected_tensors"] << " tensors the config implies, with their shapes\n";
    } else {
      out << "  layout     " << issues.size() << " tensor(s) differ from what the config implies:\n";
      constexpr std::size_t kShown = 20;
      for (std::size_t i = 0; i < issues.size() && i < kShown; ++i)
        out << "    " << issues[i]["tensor"].get<std::string>() << ": config implies "
            << issues[i]["expected"].get<std::string>() << ", checkpoint has " << issues[i]["found"].get<std::string>()
            << "\n";
      if (issues.size() > kShown) out << "    ... and " << issues.size() - kShown << " more (--json lists all)\n";
    }
  }
  const json& v = m["validation"];
  if (v["valid"].get<bool>()) {
    out << "  config     valid\n";
  } else {
    out << "  config     INVALID, " << v["problems"].size() << " problem(s):\n";
    for (const auto& p : v["problems"])
      out << "    " << p["field"].get<std::string>() << ": " << p["message"].get<std::string>() << "\n";
  }
  return out.str();
}

std::string renderCompatibility(const json& c) {
  std::ostringstream out;
  out << "drafter " << c["drafter"].get<std::string>() << " vs target " << c["target"].get<std::string>() << ": "
      << (c["compatible"].get<bool>() ? "compatible" : "NOT compatible") << " (" << c["errors"] << " error(s), "
      << c["warnings"] << " warning(s))\n";
  for (const auto& i : c["issues"]) {
    out << "  " << i["severity"].get<std::string>() << "  " << i["field"].get<std::string>() << ": drafter "
        << i["drafter_value"].get<std::string>() << ", target " << i["target_value"].get<std::string>() << "\n    "
        << i["message"].get<std::string>() << "\n";
  }
  if (!c["checked_fc_weight"].get<bool>()) out << "  (fc.weight not checked: the drafter has no weights here)\n";
  if (!c["checked_embedding_rows"].get<bool>())
    out << "  (embedding rows not checked: the target has no weights here; vocab_size used)\n";
  return out.str();
}

}  // namespace dfi::eval
