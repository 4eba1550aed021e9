#pragma once
// Which tau (mean acceptance length) the panels show: one convention on screen at a time,
// chosen in View > Tau Convention, named in every header that shows one. The default is the
// z-lab reference benchmark's (the README's and the run summary's); the numbers come from
// dfi::analysis (acceptance.h), never from a second computation here.

#include <span>

#include <QString>

#include "dfi/analysis/acceptance.h"

namespace dfi::ui {

enum class TauConvention { Reference, Vllm };

QString tauConventionName(TauConvention convention);  // "z-lab", "vLLM"
QString tauConventionExplanation(TauConvention convention);
// "τ (z-lab)": a column header.
QString tauHeader(TauConvention convention);
double tauOf(std::span<const analysis::ResponseAcceptance> responses, TauConvention convention);

}  // namespace dfi::ui
