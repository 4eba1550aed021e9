#include "models/tau_convention.h"

#include <QObject>

namespace dfi::ui {

QString tauConventionName(TauConvention convention) {
  return convention == TauConvention::Reference ? QStringLiteral("z-lab") : QStringLiteral("vLLM");
}

QString tauConventionExplanation(TauConvention convention) {
  return convention == TauConvention::Reference
             ? QObject::tr("z-lab's reference benchmark: the mean over responses of each response's mean acceptance "
                           "length (accepted drafts + 1)")
             : QObject::tr("vLLM's: the mean acceptance length pooled over every step of every response, so long "
                           "responses weigh more");
}

QString tauHeader(TauConvention convention) {
  return QStringLiteral("\u03c4 (%1)").arg(tauConventionName(convention));
}

double tauOf(std::span<const analysis::ResponseAcceptance> responses, TauConvention convention) {
  return convention == TauConvention::Reference ? analysis::tauReference(responses) : analysis::tauVllm(responses);
}

}  // namespace dfi::ui
