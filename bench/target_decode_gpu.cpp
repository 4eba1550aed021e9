// Decode step time of a real-shaped target against the memory-bandwidth bound (bench/gpu.sh).
//
//   target_decode_gpu --shape qwen3-8b|qwen3.6-27b --dir DIR [--layers N] [--device cuda:0]
//                    [--dtype bf16] [--prefill 512] [--steps 64]
//
// Writes a random checkpoint of that shape to DIR (config.json and one safetensors shard per
// layer; names and shapes from modelspec::expectedTargetTensors, so they are exactly what the
// loader reads), unless DIR already holds one; `--layers` keeps the real layer shapes but
// fewer of them, so a 27B-shaped run fits a small disk (the bound is computed from the bytes
// actually loaded, so the ratio stays meaningful). Then it loads the model, prefills, times
// greedy one-token steps and prints one JSON line with the weight bytes and the median step.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include "dfi/tensorfile/safetensors_writer.h"
#include "dfi/modelspec/target_config.h"
#include "dfi/modelspec/weight_layout.h"
#include "models/model_cache.h"
#include "models/target_model.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Published configs (docs/qwen.md 2.1 and 3.1), layer count left to --layers.
nlohmann::json shapeConfig(const std::string& shape, int layers) {
  if (shape == "qwen3-8b")
    return {{"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"}, {"vocab_size", 151936},
            {"hidden_size", 4096}, {"intermediate_size", 12288}, {"num_hidden_layers", layers},
            {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"head_dim", 128},
            {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000.0}, {"max_position_embeddings", 40960},
            {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  if (shape == "qwen3.6-27b")
    return {{"architectures", {"Qwen3_5ForCausalLM"}}, {"model_type", "qwen3_5_text"}, {"vocab_size", 248320},
            {"hidden_size", 5120}, {"intermediate_size", 17408}, {"num_hidden_layers", layers},
            {"num_attention_heads", 24}, {"num_key_value_heads", 4}, {"head_dim", 256},
            {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
            {"linear_num_key_heads", 16}, {"linear_num_value_heads", 48}, {"full_attention_interval", 4},
            {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 262144},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000000.0}, {"partial_rotary_factor", 0.25}}},
            {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  throw std::runtime_error("unknown --shape " + shape + " (qwen3-8b, qwen3.6-27b)");
}

// Shard of a tensor: "layers.N" for decoder layers, "rest" for embeddings, norm and lm head.
std::string shardOf(const std::string& name) {
  const auto at = name.find("layers.");
  if (at == std::string::npos) return "rest";
  return "layer" + name.substr(at + 7, name.find('.', at + 7) - at - 7);
}

int64_t writeRandomCheckpoint(const fs::path& dir, const nlohmann::json& config) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << config.dump(2);
  const auto parsed = dfi::modelspec::parseTargetConfig(dir / "config.json");
  const auto expected = dfi::modelspec::expectedTargetTensors(parsed);
  if (!expected) throw std::runtime_error("no weight layout for this config");
  std::map<std::string, std::vector<dfi::modelspec::ExpectedTensor>> shards;
  for (const auto& tensor : *expected) shards[shardOf(tensor.name)].push_back(tensor);
  nlohmann::json weightMap = nlohmann::json::object();
  int64_t bytes = 0;
  at::manual_seed(0);
  for (const auto& [shard, tensors] : shards) {
    const std::string file = "model-" + shard + ".safetensors";
    dfi::tensorfile::SafetensorsWriter writer(dir / file);
    for (const auto& tensor : tensors) {
      const at::Tensor values = (at::randn(tensor.shape) * 0.02).to(at::kBFloat16).contiguous();
      writer.add(tensor.name, dfi::tensorfile::DType::BF16, tensor.shape,
                 {static_cast<const std::byte*>(values.data_ptr()), values.nbytes()});
      weightMap[tensor.name] = file;
      bytes += static_cast<int64_t>(values.nbytes());
    }
    writer.finish();
  }
  std::ofstream(dir / "model.safetensors.index.json")
      << nlohmann::json{{"metadata", {{"total_size", bytes}}}, {"weight_map", weightMap}}.dump(1);
  return bytes;
}

int64_t checkpointBytes(const fs::path& dir) {
  std::ifstream in(dir / "model.safetensors.index.json");
  return nlohmann::json::parse(in)["metadata"]["total_size"].get<int64_t>();
}

void synchronize(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) torch::cuda::synchronize();
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args{{"--layers", "0"},    {"--device", "cuda:0"}, {"--dtype", "bf16"},
                                          {"--prefill", "512"}, {"--steps", "64"}};
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  if (!args.count("--shape") || !args.count("--dir")) {
    std::fprintf(stderr, "usage: target_decode_gpu --shape qwen3-8b|qwen3.6-27b --dir DIR [--layers N] [--device D]\n");
    return 2;
  }
  const std::string shape = args["--shape"], device = args["--device"];
  const int fullLayers = shape == "qwen3-8b" ? 36 : 64;
  const int layers = std::stoi(args["--layers"]) > 0 ? std::stoi(args["--layers"]) : fullLayers;
  const fs::path dir = args["--dir"];
  const auto writeStart = Clock::now();
  const int64_t bytes = fs::exists(dir / "model.safetensors.index.json")
                            ? checkpointBytes(dir)
                            : writeRandomCheckpoint(dir, shapeConfig(shape, layers));
  const double writeSeconds = std::chrono::duration<double>(Clock::now() - writeStart).count();

  at::InferenceMode guard;
  const auto loadStart = Clock::now();
  const auto model = dfi::engine::TargetModel::load(dir, {.devices = {device}, .dtype = args["--dtype"]});
  synchronize(device);
  const double loadSeconds = std::chrono::duration<double>(Clock::now() - loadStart).count();

  const int64_t prefill = std::stoll(args["--prefill"]), steps = std::stoll(args["--steps"]);
  const at::Tensor ids = (at::arange(prefill, at::kLong) * 7919 + 13).remainder(1000).unsqueeze(0);
  dfi::engine::ModelCache cache = model->newCache();
  at::Tensor token = model->forward(ids, &cache).logits.select(1, -1).argmax(-1, true);
  std::vector<double> stepSeconds;
  for (int64_t s = 0; s < steps; ++s) {
    synchronize(device);
    const auto start = Clock::now();
    token = model->forward(token, &cache).logits.select(1, -1).argmax(-1, true);
    synchronize(device);
    stepSeconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(stepSeconds.begin(), stepSeconds.end());
  const nlohmann::json line = {{"bench", "target_decode_step_" + shape},
                               {"device", device},
                               {"layers", layers},
                               {"full_layers", fullLayers},
                               {"weight_bytes", bytes},
                               {"write_s", writeSeconds},
                               {"load_s", loadSeconds},
                               {"prefill_tokens", prefill},
                               {"median_step_s", stepSeconds[stepSeconds.size() / 2]},
                               {"min_step_s", stepSeconds.front()}};
  std::cout << line.dump() << std::endl;
}
