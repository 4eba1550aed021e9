#pragma once
// Which tau (mean acceptance length) the panels show: one convention on screen at a time,
// chosen in View > Tau Convention, named in every header that shows one. The default is the
// z-lab reference benchmark's (the README's and the run summary's). The conventions, their
// names and formulas are dfi::analysis's (acceptance.h); this only makes Qt strings of them.

#include <QString>

#include "dfi/analysis/acceptance.h"

namespace dfi::ui {

using analysis::TauConvention;
using analysis::tauOf;

QString tauConventionName(TauConvention convention);  // "z-lab", "vLLM"
QString tauConventionExplanation(TauConvention convention);
// "τ (z-lab)": a column header.
QString tauHeader(TauConvention convention);

}  // namespace dfi::ui
