#include "models/tau_convention.h"

namespace dfi::ui {

QString tauConventionName(TauConvention convention) {
  const std::string_view name = analysis::tauConventionLabel(convention);
  return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

QString tauConventionExplanation(TauConvention convention) {
  const std::string_view text = analysis::tauConventionFormula(convention);
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString tauHeader(TauConvention convention) {
  return QStringLiteral("\u03c4 (%1)").arg(tauConventionName(convention));
}

}  // namespace dfi::ui
