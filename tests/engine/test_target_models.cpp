// Target models of the dense families against Hugging Face transformers
// (tests/oracle/gen_target_models.py), through the shared oracle suite.

#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(Models, TargetOracle,
                         ::testing::Values("target_models/qwen3_tied_gqa", "target_models/qwen3_untied_mha_yarn",
                                           "target_models/qwen35_untied", "target_models/qwen35_vl_layout",
                                           "target_models/qwen3_next_dense"));

}  // namespace
}  // namespace dfi::engine::test
