// diff-dump's comparison library on hand-built files: name pairing (transformers'
// hidden_states, batch dimensions, --map), per-position differences in every float dtype,
// the refusals (shape mismatch, nothing paired, bad mapping) and the three report forms.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tensorfile/tensorfile_test_support.h"
#include "dfi/analysis/tap_diff.h"
#include "dfi/analysis/tap_diff_report.h"
#include "dfi/analysis/tap_names.h"
#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"

namespace dfi::analysis {
namespace {

using tensorfile::DType;
using tensorfile::SafetensorsWriter;
using tensorfile::testing::catchError;
using tensorfile::testing::ScratchDir;

std::vector<std::byte> f32(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Round to nearest even, as torch does: exact for the small values used here.
std::uint16_t toBf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<std::uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

std::vector<std::byte> bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> half(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) half[i] = toBf16(v[i]);
  std::vector<std::byte> out(half.size() * 2);
  std::memcpy(out.data(), half.data(), out.size());
  return out;
}

// values[p * width + i] = (p + 1) * 0.5 - i * 0.25: exactly representable in bf16 and f16.
std::vector<float> ramp(int positions, int width) {
  std::vector<float> v;
  for (int p = 0; p < positions; ++p)
    for (int i = 0; i < width; ++i) v.push_back(static_cast<float>((p + 1) * 0.5 - i * 0.25));
  return v;
}

std::vector<std::string> names(const TapMatching& m) {
  std::vector<std::string> out;
  for (const TapPair& p : m.pairs) out.push_back(p.ours + "<-" + p.theirs);
  return out;
}

TEST(TapNames, PartialHiddenStatesPairWithTheLayerBelow) {
  const TapMatching m = matchTapNames({"ours", {"logits", "hidden.2", "hidden.10", "final_hidden", "input_ids"}},
                                      {"theirs", {"hidden_states.3", "hidden_states_11", "logits", "extra"}}, {});
  EXPECT_EQ(names(m), (std::vector<std::string>{"hidden.2<-hidden_states.3", "hidden.10<-hidden_states_11",
                                                "logits<-logits"}));
  EXPECT_EQ(m.pairs[0].rule, "hidden_states");
  EXPECT_EQ(m.pairs[2].rule, "name");
  EXPECT_EQ(m.unmatchedOurs, (std::vector<std::string>{"final_hidden", "input_ids"}));
  EXPECT_EQ(m.unmatchedTheirs, (std::vector<std::string>{"extra"}));
}

TEST(TapNames, TheWholeTupleEndsWithTheFinalNorm) {
  // transformers returns L + 1 states; the last is after the model's final norm.
  const TapMatching m = matchTapNames(
      {"ours", {"hidden.0", "hidden.1", "hidden.2", "final_hidden"}},
      {"theirs", {"hidden_states.0", "hidden_states.1", "hidden_states.2", "hidden_states.3"}}, {});
  EXPECT_EQ(names(m), (std::vector<std::string>{"final_hidden<-hidden_states.3", "hidden.0<-hidden_states.1",
                                                "hidden.1<-hidden_states.2"}));
  EXPECT_EQ(m.unmatchedOurs, (std::vector<std::string>{"hidden.2"}));
  EXPECT_EQ(m.unmatchedTheirs, (std::vector<std::string>{"hidden_states.0"}));

  // Our hidden.3 exists: their 0..3 cannot be a whole 4-layer tuple of this model.
  const TapMatching partial = matchTapNames(
      {"ours", {"hidden.2", "hidden.3", "final_hidden"}},
      {"theirs", {"hidden_states.0", "hidden_states.1", "hidden_states.2", "hidden_states.3"}}, {});
  EXPECT_EQ(names(partial), (std::vector<std::string>{"hidden.2<-hidden_states.3"}));

  const TapMatching last = matchTapNames({"ours", {"final_hidden"}}, {"theirs", {"last_hidden_state"}}, {});
  EXPECT_EQ(names(last), (std::vector<std::string>{"final_hidden<-last_hidden_state"}));
}

TEST(TapNames, MappingsComeFirstAndAreChecked) {
  const TapMatching m = matchTapNames({"ours", {"hidden.0", "context.fc"}},
                                      {"theirs", {"hidden_states.1", "target_hidden", "fc_out"}},
                                      {parseTapMapping("target_hidden=hidden.0"), parseTapMapping("fc_out=context.fc")});
  EXPECT_EQ(names(m), (std::vector<std::string>{"context.fc<-fc_out", "hidden.0<-target_hidden"}));
  EXPECT_EQ(m.pairs[0].rule, "map");
  EXPECT_EQ(m.unmatchedTheirs, (std::vector<std::string>{"hidden_states.1"}));

  EXPECT_EQ(catchError<UsageError>([] { parseTapMapping("no_equals"); }).context().item, "--map");
  EXPECT_EQ(parseTapMapping("a=b=c").ours, "c");  // split at the last '='
  const auto missing = catchError<UsageError>(
      [] { matchTapNames({"o.st", {"hidden.0"}}, {"t.st", {"x"}}, {parseTapMapping("x=hidden.9")}); });
  EXPECT_EQ(missing.context().file, "o.st");
  EXPECT_EQ(missing.context().item, "hidden.9");
  const auto twice = catchError<UsageError>([] {
    matchTapNames({"o.st", {"h"}}, {"t.st", {"x", "y"}}, {parseTapMapping("x=h"), parseTapMapping("y=h")});
  });
  EXPECT_EQ(twice.context().item, "h");
}

TEST(TapNames, NaturalOrder) {
  EXPECT_TRUE(naturalLess("hidden.2", "hidden.10"));
  EXPECT_FALSE(naturalLess("hidden.10", "hidden.2"));
  EXPECT_TRUE(naturalLess("a", "b"));
  EXPECT_TRUE(naturalLess("layer.1.x", "layer.01.y"));
  EXPECT_FALSE(naturalLess("x", "x"));
}

TEST(TapDiff, BatchDimensionOfOneOnEitherSide) {
  using S = std::vector<std::int64_t>;
  EXPECT_EQ(alignedShape(S{4, 3}, S{1, 4, 3}), (S{4, 3}));
  EXPECT_EQ(alignedShape(S{1, 4, 3}, S{4, 3}), (S{4, 3}));
  EXPECT_EQ(alignedShape(S{}, S{}), (S{}));
  EXPECT_EQ(alignedShape(S{1, 4, 3}, S{1, 4, 3}), (S{4, 3}));  // both batched
  EXPECT_EQ(alignedShape(S{1, 3}, S{1, 3}), (S{1, 3}));        // one row of [N, H] is not a batch
  EXPECT_EQ(alignedShape(S{2, 4, 3}, S{2, 4, 3}), (S{2, 4, 3}));
  EXPECT_FALSE(alignedShape(S{4, 3}, S{2, 4, 3}));
  EXPECT_FALSE(alignedShape(S{4, 3}, S{3, 4}));
  EXPECT_FALSE(alignedShape(S{4, 3}, S{1, 1, 4, 3}));
}

class TapDiffFiles : public ::testing::Test {
 protected:
  ScratchDir dir;
  std::filesystem::path ours = dir / "ours.safetensors";
  std::filesystem::path theirs = dir / "theirs.safetensors";
};

TEST_F(TapDiffFiles, PerPositionDifferencesAcrossDtypesAndBatch) {
  {
    SafetensorsWriter w(ours);
    w.add("hidden.0", DType::F32, {4, 3}, f32(ramp(4, 3)));
    w.add("hidden.1", DType::F32, {4, 3}, f32(ramp(4, 3)));
    w.add("final_hidden", DType::F32, {4, 3}, f32(ramp(4, 3)));
    w.finish();
  }
  std::vector<float> perturbed = ramp(4, 3);
  perturbed[2 * 3 + 1] += 0.5f;  // position 2, element 1
  perturbed[3 * 3 + 0] -= 0.25f; // position 3, element 0
  {
    SafetensorsWriter w(theirs);
    w.add("hidden_states.1", DType::BF16, {1, 4, 3}, bf16(ramp(4, 3)));  // exact in bf16
    w.add("hidden_states.2", DType::F32, {1, 4, 3}, f32(perturbed));
    w.add("unrelated", DType::F32, {2}, f32({1, 2}));
    w.finish();
  }
  const TapDiffReport report = diffTapFiles(ours, theirs, {.tolerance = 0.1});
  ASSERT_EQ(report.tensors.size(), 2u);
  EXPECT_EQ(report.unmatchedOurs, (std::vector<std::string>{"final_hidden"}));
  EXPECT_EQ(report.unmatchedTheirs, (std::vector<std::string>{"unrelated"}));

  const TensorDiff& same = report.tensors[0];
  EXPECT_EQ(same.ours, "hidden.0");
  EXPECT_EQ(same.theirs, "hidden_states.1");
  EXPECT_EQ(same.theirsDtype, "BF16");
  EXPECT_EQ(same.shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(same.theirsShape, (std::vector<std::int64_t>{1, 4, 3}));
  EXPECT_EQ(same.maxAbsDiff, 0);
  EXPECT_EQ(same.worstPosition, 0);
  EXPECT_TRUE(same.withinTolerance());
  EXPECT_EQ(same.positions.cosine, (std::vector<double>(4, 1.0)));

  const TensorDiff& diff = report.tensors[1];
  EXPECT_EQ(diff.ours, "hidden.1");
  EXPECT_EQ(diff.positions.maxAbsDiff, (std::vector<double>{0, 0, 0.5, 0.25}));
  EXPECT_EQ(diff.worstPosition, 2);
  EXPECT_EQ(diff.firstOverTolerance, 2);
  EXPECT_FALSE(diff.withinTolerance());
  EXPECT_DOUBLE_EQ(diff.positions.rmsDiff[2], std::sqrt(0.25 / 3));
  EXPECT_DOUBLE_EQ(diff.rmsDiff, std::sqrt((0.25 + 0.0625) / 12));
  // Position 2 of theirs: 1.5, 1.75, 1.0 -> rms sqrt((2.25 + 3.0625 + 1) / 3).
  EXPECT_DOUBLE_EQ(diff.positions.relativeDiff[2], std::sqrt(0.25 / 3) / std::sqrt((2.25 + 3.0625 + 1.0) / 3));
  const double dot = 1.5 * 1.5 + 1.25 * 1.75 + 1.0 * 1.0;
  EXPECT_NEAR(diff.positions.cosine[2], dot / std::sqrt((2.25 + 1.5625 + 1) * (2.25 + 3.0625 + 1)), 1e-15);
  EXPECT_DOUBLE_EQ(diff.minCosine, *std::min_element(diff.positions.cosine.begin(), diff.positions.cosine.end()));

  EXPECT_FALSE(report.withinTolerance());
  ASSERT_EQ(report.beyondTolerance().size(), 1u);
  EXPECT_EQ(report.beyondTolerance()[0]->ours, "hidden.1");
  EXPECT_TRUE(diffTapFiles(ours, theirs, {.tolerance = 0.5}).withinTolerance());  // > tolerance, not >=
}

TEST_F(TapDiffFiles, NonFiniteValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  {
    SafetensorsWriter w(ours);
    w.add("x", DType::F32, {3, 2}, f32({nan, 1, inf, 1, nan, 1}));
    w.finish();
  }
  {
    SafetensorsWriter w(theirs);
    w.add("x", DType::F32, {3, 2}, f32({nan, 1, inf, 1, 2, 1}));
    w.finish();
  }
  const TensorDiff d = diffTapFiles(ours, theirs, {}).tensors.at(0);
  EXPECT_EQ(d.positions.maxAbsDiff[0], 0);  // NaN on both sides alike
  EXPECT_EQ(d.positions.maxAbsDiff[1], 0);  // the same infinity
  EXPECT_TRUE(std::isinf(d.positions.maxAbsDiff[2]));
  EXPECT_TRUE(std::isnan(d.positions.cosine[2]));
  EXPECT_EQ(d.firstOverTolerance, 2);
  EXPECT_TRUE(std::isnan(d.minCosine));
}

TEST_F(TapDiffFiles, ZeroRowsAndScalars) {
  {
    SafetensorsWriter w(ours);
    w.add("zeros", DType::F32, {2, 2}, f32({0, 0, 0, 0}));
    w.add("scalar", DType::F32, {}, f32({3}));
    w.finish();
  }
  {
    SafetensorsWriter w(theirs);
    w.add("zeros", DType::F32, {2, 2}, f32({0, 0, 0, 1}));
    w.add("scalar", DType::F32, {}, f32({3}));
    w.finish();
  }
  const TapDiffReport r = diffTapFiles(ours, theirs, {.tolerance = 2});
  const TensorDiff& scalar = r.tensors.at(0);
  EXPECT_EQ(scalar.ours, "scalar");
  EXPECT_EQ(scalar.positions.maxAbsDiff, (std::vector<double>{0}));
  const TensorDiff& zeros = r.tensors.at(1);
  EXPECT_EQ(zeros.positions.cosine, (std::vector<double>{1, 0}));  // both zero; one zero
  EXPECT_EQ(zeros.positions.relativeDiff[0], 0);
  EXPECT_DOUBLE_EQ(zeros.positions.relativeDiff[1], 1);
}

TEST_F(TapDiffFiles, ShapeMismatchNamesTheTensorBothShapesAndBothFiles) {
  {
    SafetensorsWriter w(ours);
    w.add("logits", DType::F32, {4, 3}, f32(ramp(4, 3)));
    w.add("hidden.0", DType::F32, {4, 3}, f32(ramp(4, 3)));
    w.finish();
  }
  {
    SafetensorsWriter w(theirs);
    w.add("logits", DType::F32, {1, 3, 4}, f32(ramp(4, 3)));
    w.add("hidden_states.1", DType::F32, {2, 4, 3}, f32(ramp(8, 3)));
    w.finish();
  }
  const auto error = catchError<ValidationError>([&] { diffTapFiles(ours, theirs, {}); });
  EXPECT_EQ(error.context().item, "hidden.0");
  EXPECT_EQ(error.context().file, theirs.string());
  const std::string message = error.message();
  for (const char* part : {"hidden.0 <- hidden_states.1", "[4, 3]", "[2, 4, 3]", "logits: ours", "[1, 3, 4]"})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  EXPECT_NE(message.find(ours.string()), std::string::npos);
  EXPECT_EQ(error.exitCode(), 5);
}

TEST_F(TapDiffFiles, NothingPairedAndBadTolerance) {
  {
    SafetensorsWriter w(ours);
    w.add("a", DType::F32, {1}, f32({1}));
    w.finish();
  }
  {
    SafetensorsWriter w(theirs);
    w.add("b", DType::F32, {1}, f32({1}));
    w.finish();
  }
  EXPECT_EQ(catchError<ValidationError>([&] { diffTapFiles(ours, theirs, {}); }).context().file, theirs.string());
  EXPECT_EQ(catchError<UsageError>([&] { diffTapFiles(ours, theirs, {.tolerance = -1}); }).context().item,
            "--tolerance");
  // A mapping pairs them.
  EXPECT_TRUE(diffTapFiles(ours, theirs, {.mappings = {{"b", "a"}}}).withinTolerance());
}

TEST_F(TapDiffFiles, TableJsonAndTensorFile) {
  {
    SafetensorsWriter w(ours);
    w.add("hidden.0", DType::F32, {3, 2}, f32(ramp(3, 2)));
    w.add("hidden.1", DType::F32, {3, 2}, f32(ramp(3, 2)));
    w.add("input_ids", DType::I64, {3}, std::vector<std::byte>(24));
    w.finish();
  }
  std::vector<float> perturbed = ramp(3, 2);
  perturbed[2 * 2] += 1;
  {
    SafetensorsWriter w(theirs);
    w.add("hidden_states.1", DType::F32, {1, 3, 2}, f32(ramp(3, 2)));
    w.add("hidden_states.2", DType::F32, {1, 3, 2}, f32(perturbed));
    w.finish();
  }
  const TapDiffReport report = diffTapFiles(ours, theirs, {});

  const std::string table = renderTapDiffTable(report);
  EXPECT_NE(table.find("hidden.1 <- hidden_states.2  [3, 2]"), std::string::npos) << table;
  EXPECT_NE(table.find("unmatched in ours (1): input_ids"), std::string::npos) << table;
  EXPECT_NE(table.find("1 beyond tolerance: hidden.1 (from position 2)"), std::string::npos) << table;

  const auto json = nlohmann::json::parse(tapDiffJson(report));
  EXPECT_FALSE(json["within_tolerance"].get<bool>());
  ASSERT_EQ(json["tensors"].size(), 2u);
  const auto& t = json["tensors"][1];
  EXPECT_EQ(t["name"], "hidden.1");
  EXPECT_EQ(t["theirs"], "hidden_states.2");
  EXPECT_EQ(t["theirs_shape"], (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(t["first_position_over_tolerance"], 2);
  EXPECT_EQ(t["worst_position"], 2);
  EXPECT_EQ(t["positions"]["max_abs_diff"], (std::vector<double>{0, 0, 1}));
  EXPECT_TRUE(json["tensors"][0]["first_position_over_tolerance"].is_null());
  EXPECT_EQ(json["unmatched_ours"], (std::vector<std::string>{"input_ids"}));

  const auto out = dir / "report.safetensors";
  writeTapDiffTensors(report, out);
  const auto file = tensorfile::SafetensorsFile::open(out);
  for (const char* name : {"hidden.1.max_abs_diff", "hidden.1.rms_diff", "hidden.1.relative_diff", "hidden.1.cosine",
                           "hidden.0.cosine"})
    ASSERT_TRUE(file.find(name)) << name;
  const auto view = file.view("hidden.1.max_abs_diff");
  EXPECT_EQ(view.info().shape, (std::vector<std::int64_t>{3}));
  std::vector<float> values(3);
  std::memcpy(values.data(), view.data(), 12);
  EXPECT_EQ(values, (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(file.metadata().at("theirs.hidden.1"), "hidden_states.2");
}

}  // namespace
}  // namespace dfi::analysis
