// How long Checkpoint::open takes on a ~5 GB sharded checkpoint, and how much memory it keeps
// resident, against the Python safetensors package doing the same work in the same run.
// The checkpoint is generated once under the build tree as sparse files: real headers, holes
// for data (costs no disk), which is fine because opening must never touch tensor data.
// Prints one JSON line per figure.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bench_size.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "reference_script.h"

namespace fs = std::filesystem;
using dfi::tensorfile::Checkpoint;
using dfi::tensorfile::DType;
using dfi::tensorfile::TensorLayout;
using nlohmann::json;

namespace {

const int kRepeats = dfi::bench::sized(15, 3);
// A smoke run divides every dimension by 16, so bytes by 256 (shards too: as many of them).
const std::int64_t kShrink = dfi::bench::sized(1, 16);
const std::uint64_t kShardBytes = (1ull << 30) / static_cast<std::uint64_t>(kShrink * kShrink);

// A Qwen3.5-style vision-language checkpoint of about 5.2 GB in BF16: 18 text layers at
// Qwen3-4B width, a small vision tower and an MTP head (skipped by the text mapping).
std::vector<TensorLayout> qwenStyleTensors() {
  const std::int64_t hidden = 2560 / kShrink, inner = 9728 / kShrink, vocab = 151936 / kShrink,
                     q = 32 * 128 / kShrink, kv = 8 * 128 / kShrink, headDim = 128 / kShrink,
                     vision = 1024 / kShrink;
  std::vector<TensorLayout> tensors{{"model.language_model.embed_tokens.weight", DType::BF16, {vocab, hidden}},
                                    {"model.language_model.norm.weight", DType::BF16, {hidden}},
                                    {"lm_head.weight", DType::BF16, {vocab, hidden}},
                                    {"mtp.fc.weight", DType::BF16, {hidden, 2 * hidden}}};
  for (int i = 0; i < 18; ++i) {
    const std::string p = "model.language_model.layers." + std::to_string(i) + ".";
    for (auto [name, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
             {"self_attn.q_proj.weight", {q, hidden}},  {"self_attn.k_proj.weight", {kv, hidden}},
             {"self_attn.v_proj.weight", {kv, hidden}}, {"self_attn.o_proj.weight", {hidden, q}},
             {"self_attn.q_norm.weight", {headDim}},   {"self_attn.k_norm.weight", {headDim}},
             {"mlp.gate_proj.weight", {inner, hidden}}, {"mlp.up_proj.weight", {inner, hidden}},
             {"mlp.down_proj.weight", {hidden, inner}}, {"input_layernorm.weight", {hidden}},
             {"post_attention_layernorm.weight", {hidden}}})
      tensors.push_back({p + name, DType::BF16, shape});
  }
  for (int i = 0; i < 8; ++i) {
    const std::string p = "model.visual.blocks." + std::to_string(i) + ".";
    tensors.push_back({p + "attn.qkv.weight", DType::BF16, {3 * vision, vision}});
    tensors.push_back({p + "norm1.weight", DType::F32, {vision}});
  }
  return tensors;
}

void writeSparseShard(const fs::path& file, const std::vector<TensorLayout>& tensors) {
  const auto encoded = dfi::tensorfile::encodeSafetensorsHeader(tensors, {{"format", "pt"}});
  std::ofstream(file, std::ios::binary).write(encoded.bytes.data(), std::streamsize(encoded.bytes.size()));
  if (::truncate(file.c_str(), off_t(encoded.bytes.size() + encoded.dataSize)) != 0)
    throw std::runtime_error("cannot extend " + file.string());
}

// Writes the checkpoint unless a previous run left it complete (marked by the index file,
// which is written last).
void ensureCheckpoint(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors.index.json")) return;
  fs::create_directories(dir);
  std::vector<std::vector<TensorLayout>> shards(1);
  std::uint64_t inShard = 0, total = 0;
  for (auto& tensor : qwenStyleTensors()) {
    const auto bytes = *dfi::tensorfile::tensorByteSize(tensor.dtype, tensor.shape);
    if (inShard > 0 && inShard + bytes > kShardBytes) shards.emplace_back(), inShard = 0;
    inShard += bytes, total += bytes;
    shards.back().push_back(std::move(tensor));
  }
  json index{{"metadata", {{"total_size", total}}}, {"weight_map", json::object()}};
  for (std::size_t s = 0; s < shards.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, shards.size());
    writeSparseShard(dir / name, shards[s]);
    for (const auto& tensor : shards[s]) index["weight_map"][tensor.name] = name;
  }
  std::ofstream(dir / "model.safetensors.index.json") << index.dump(1);
}

std::uint64_t residentBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  std::uint64_t kib = 0;
  while (status >> key)
    if (key == "VmRSS:" && status >> kib) return kib * 1024;
  return 0;
}

// Streams every tensor of one shard through its view into `sink` (standing in for the copy to
// a device), optionally releasing each tensor's pages after its copy, and returns the peak of
// the shard mapping's resident bytes.
std::uint64_t streamShard(const Checkpoint& checkpoint, const dfi::tensorfile::SafetensorsFile& shard,
                          bool release, std::vector<std::byte>& sink) {
  std::uint64_t peak = 0;
  for (const auto& name : checkpoint.names()) {
    const auto view = checkpoint.tensor(name);
    if (view.info().file != shard.path()) continue;
    sink.assign(view.bytes().begin(), view.bytes().end());
    peak = std::max(peak, shard.mapping().residentBytes());
    if (release) checkpoint.releasePages(name);
  }
  return peak;
}

json pythonReference(const fs::path& dir) {
  const std::string command = std::string(DFI_PYTHON) + " " + DFI_SOURCE_DIR "/bench/bench_checkpoint_open_ref.py '" +
                              dir.string() + "' " + std::to_string(kRepeats);
  return dfi::bench::referenceOutput(command);
}

double medianOpenMs(const fs::path& dir) {
  std::vector<double> times;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto checkpoint = Checkpoint::open(dir);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main() {
  const fs::path dir = fs::path(DFI_BENCH_DATA_DIR) / dfi::bench::sized<std::string>("checkpoint_open_5gb", "checkpoint_open_smoke");
  ensureCheckpoint(dir);

  // A first open loads the code it runs (libcrypto, spdlog); the figures are for an open after it.
  Checkpoint::open(dir);
  const auto rssBefore = residentBytes();
  std::optional<Checkpoint> kept = Checkpoint::open(dir);
  const auto rssAfter = residentBytes();
  std::uint64_t headerBytes = 0, fileBytes = 0, mappedResident = 0;
  const dfi::tensorfile::SafetensorsFile* largest = &kept->shards().front();
  for (const auto& shard : kept->shards()) {
    headerBytes += shard.rawHeader().size();
    fileBytes += shard.fileBytes().size();
    mappedResident += shard.mapping().residentBytes();
    if (shard.fileBytes().size() > largest->fileBytes().size()) largest = &shard;
  }
  const std::uint64_t largestShard = largest->fileBytes().size();

  const double openMs = medianOpenMs(dir);
  const auto reference = pythonReference(dir);
  const double referenceMs = reference.at("median_ms").get<double>();
  const json common{{"bench", "checkpoint_open"},
                    {"checkpoint_bytes", fileBytes},
                    {"shards", kept->shards().size()},
                    {"tensors_mapped", kept->names().size()},
                    {"tensors_stored", reference.at("tensors")}};
  auto line = [&](json figure) {
    figure.update(common);
    std::cout << figure.dump() << std::endl;
  };
  line({{"figure", "open_ms"}, {"value", openMs}, {"goal_ms", 100},
        {"reference", "python safetensors.safe_open over all shards"}, {"reference_ms", referenceMs},
        {"ratio", openMs / referenceMs}});
  line({{"figure", "rss_delta_after_open_bytes"}, {"value", rssAfter - rssBefore},
        {"reference_rss_delta_bytes", reference.at("rss_delta_bytes")},
        {"header_bytes", headerBytes}, {"largest_shard_bytes", largestShard},
        {"ratio_to_largest_shard", double(rssAfter - rssBefore) / double(largestShard)}});
  line({{"figure", "shard_pages_resident_bytes"}, {"value", mappedResident},
        {"header_bytes", headerBytes}, {"goal", "header pages only"},
        {"ratio_to_header_bytes", double(mappedResident) / double(headerBytes)}});

  // Loading: the largest shard streamed tensor by tensor, releasing pages after each copy,
  // against the same stream keeping them (what a loader without releasePages would hold).
  std::vector<std::byte> sink;
  const auto peakReleased = streamShard(*kept, *largest, true, sink);
  const auto peakKept = streamShard(*kept, *largest, false, sink);
  line({{"figure", "peak_shard_pages_resident_while_streaming_bytes"}, {"value", peakReleased},
        {"reference", "same stream without releasePages"}, {"reference_bytes", peakKept},
        {"ratio", double(peakReleased) / double(peakKept)}, {"largest_shard_bytes", largestShard},
        {"largest_tensor_bytes", sink.capacity()},
        {"ratio_to_largest_shard", double(peakReleased) / double(largestShard)}});
  return 0;
}
