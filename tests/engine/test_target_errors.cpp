// Bad checkpoints and requests give a dfi::Error that names the file, the tensor and both
// shapes, never a crash: a copy of an oracle fixture is written with one tensor missing,
// reshaped or stored in a dtype that cannot be a weight.

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "models/target_model.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;
using tensorfile::DType;
using tensorfile::TensorInfo;

// Rewrites `model`'s model.safetensors into a temporary directory, letting `edit` replace or
// drop (return false) each tensor.
using Edit = std::function<bool(const TensorInfo&, DType&, std::vector<int64_t>&, std::vector<std::byte>&)>;

fs::path brokenCopy(const std::string& model, const std::string& tag, const Edit& edit) {
  const fs::path source = test::oracleDir() / model;
  const fs::path dir = fs::path(DFI_BINARY_DIR) / "tmp" / ("target_errors_" + tag);
  fs::create_directories(dir);
  fs::copy_file(source / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  const auto file = tensorfile::SafetensorsFile::open(source / "model.safetensors");
  tensorfile::SafetensorsWriter writer(dir / "model.safetensors");
  for (const TensorInfo& info : file.tensors()) {
    const auto bytes = file.view(info.name).bytes();
    std::vector<std::byte> data(bytes.begin(), bytes.end());
    DType dtype = info.dtype;
    std::vector<int64_t> shape = info.shape;
    if (edit(info, dtype, shape, data)) writer.add(info.name, dtype, shape, data);
  }
  writer.finish();
  return dir;
}

struct LoadFailure {
  std::string message;
  int exitCode = 0;  // tells the dfi::Error subclasses apart (ValidationError 5, FormatError 4)
};

LoadFailure loadFailure(const fs::path& dir) {
  try {
    TargetModel::load(dir, ModelOptions());
  } catch (const Error& e) {
    return {e.what(), e.exitCode()};
  }
  ADD_FAILURE() << "loading " << dir << " did not fail";
  return {};
}

const std::string kTensor = "model.layers.1.linear_attn.in_proj_qkv.weight";

TEST(TargetErrors, MissingTensorNamesTheCheckpointTensorAndExpectedShape) {
  const fs::path dir = brokenCopy("qwen35_untied", "missing", [](const TensorInfo& info, auto&, auto&, auto&) {
    return info.name != kTensor;
  });
  const auto [message, exitCode] = loadFailure(dir);
  EXPECT_EQ(exitCode, ValidationError("").exitCode());
  EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
  EXPECT_NE(message.find(kTensor), std::string::npos) << message;
  EXPECT_NE(message.find("[192, 64]"), std::string::npos) << message;
}

TEST(TargetErrors, WrongShapeNamesTheFileTheTensorAndBothShapes) {
  const fs::path dir = brokenCopy("qwen35_untied", "shape", [](const TensorInfo& info, DType&, auto& shape, auto&) {
    if (info.name == kTensor) shape = {64, 192};
    return true;
  });
  const auto [message, exitCode] = loadFailure(dir);
  EXPECT_EQ(exitCode, ValidationError("").exitCode());
  EXPECT_NE(message.find((dir / "model.safetensors").string()), std::string::npos) << message;
  EXPECT_NE(message.find(kTensor), std::string::npos) << message;
  EXPECT_NE(message.find("[64, 192]"), std::string::npos) << message;
  EXPECT_NE(message.find("[192, 64]"), std::string::npos) << message;
}

TEST(TargetErrors, IntegerWeightIsAFormatErrorNamingTheTensor) {
  const fs::path dir = brokenCopy("qwen3_tied_gqa", "dtype", [](const TensorInfo& info, DType& dtype, auto&, auto&) {
    if (info.name == "model.norm.weight") dtype = DType::I32;  // same byte size as F32
    return true;
  });
  const auto [message, exitCode] = loadFailure(dir);
  EXPECT_EQ(exitCode, FormatError("").exitCode());
  EXPECT_NE(message.find("model.norm.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("I32"), std::string::npos) << message;
}

TEST(TargetErrors, BadRequestsAreUsageErrors) {
  const auto model = TargetModel::load(test::oracleDir() / "qwen3_tied_gqa", ModelOptions{});
  const at::Tensor ids = at::zeros({1, 3}, at::kLong);
  EXPECT_THROW(model->forward(ids, nullptr, {.tapLayers = {3}}), UsageError);
  EXPECT_THROW(model->forward(ids, nullptr, {.tapLayers = {-1}}), UsageError);
  EXPECT_THROW(model->forward(ids[0], nullptr), UsageError);
  EXPECT_THROW(TargetModel::load(test::oracleDir() / "qwen3_tied_gqa", {.dtype = "int8"}), UsageError);
  EXPECT_THROW(TargetModel::load(test::oracleDir() / "qwen3_tied_gqa", {.devices = {"tpu"}}), UsageError);
  EXPECT_THROW(TargetModel::load(test::oracleDir() / "qwen3_tied_gqa", {.devices = {"cuda:x"}}), UsageError);
  EXPECT_THROW(TargetModel::load(test::oracleDir() / "qwen3_tied_gqa", {.devices = {"cuda:99"}}), UsageError);
}

}  // namespace
}  // namespace dfi::engine
