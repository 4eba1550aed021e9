#pragma once
// What `dflash-eval serve` answered to an inspect request (InspectClient): the probes of one
// recorded block, and whether they could be stored into the session they belong to. A header
// of its own so that SessionContext, which hands the answers to the panels, needs no process.

#include <vector>

#include <QMetaType>
#include <QString>

#include "dfi/session/records.h"

namespace dfi::ui {

struct InspectAnswer {
  session::RunId run = 0;
  session::StepId step = 0;
  std::vector<session::TensorRecord> tensors;
  std::vector<session::StatisticRecord> statistics;
  bool stored = false;  // written into the session file
  QString storeError;   // why not, when not
};

}  // namespace dfi::ui

Q_DECLARE_METATYPE(dfi::ui::InspectAnswer)
