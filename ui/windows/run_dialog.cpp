#include "run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QVBoxLayout>

#include "context/engine_client.h"
#include "context/engine_locator.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/session/record_fields.h"

namespace dfi::ui {
namespace {

std::vector<std::string> toStrings(const QStringList& list) {
  std::vector<std::string> out;
  for (const QString& s : list) out.push_back(s.trimmed().toStdString());
  return out;
}

// Settings keys of the remembered form (QSettings group "run").
const QString kRunGroup = QStringLiteral("run");

QString formatSeconds(double s) {
  return s < 90 ? QStringLiteral("%1 s").arg(qRound(s)) : QStringLiteral("%1 min").arg(s / 60, 0, 'f', 1);
}

}  // namespace

RunDialog::RunDialog(QWidget* parent) : QDialog(parent), client_(new EngineClient(this)) {
  setWindowTitle(tr("Run an evaluation"));
  auto* form = new QFormLayout;
  target_ = pathField(QStringLiteral("target"), tr("target model directory (config.json, *.safetensors, tokenizer.json)"));
  drafters_ = pathField(QStringLiteral("drafters"), tr("drafter directories, separated by ';'"));
  prompts_ = pathField(QStringLiteral("prompts"), tr("prompts .jsonl"));
  session_ = pathField(QStringLiteral("session"), tr("session file to write (.dfi)"));
  prefix_ = pathField(QStringLiteral("prefix"), tr("optional: a command prefix, e.g. ssh gpu-host"));
  engine_ = pathField(QStringLiteral("engine"), tr("engine executable on that machine"));
  engine_->setToolTip(tr("Locally, \"dflash-eval\" is looked for in DFLASH_EVAL, beside the inspector, in the build "
                         "tree's app/eval and on PATH"));
  device_ = new QComboBox;
  device_->setEditable(true);
  device_->addItems({QStringLiteral("cpu"), QStringLiteral("cuda:0"), QStringLiteral("cuda:0,cuda:1")});
  dtype_ = new QComboBox;
  dtype_->addItems({QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16")});
  auto* modes = new QHBoxLayout;
  live_ = new QCheckBox(tr("live"));
  teacherForced_ = new QCheckBox(tr("teacher-forced"));
  ddtree_ = new QCheckBox(tr("DDTree"));
  for (QCheckBox* c : {live_, teacherForced_, ddtree_}) {
    c->setChecked(true);
    modes->addWidget(c);
  }
  auto* variantRow = new QHBoxLayout;
  for (analysis::MaskVariant v : analysis::kAllMaskVariants) {
    auto* box = new QCheckBox(QString::fromUtf8(enumName(v).data()));
    box->setChecked(v == analysis::MaskVariant::Reference || v == analysis::MaskVariant::AnchorVisible);
    variants_ << box;
    variantRow->addWidget(box);
  }
  budget_ = new QSpinBox;
  budget_->setRange(1, 1024);
  budget_->setValue(8);
  maxNewTokens_ = new QSpinBox;
  maxNewTokens_->setRange(1, 32768);
  maxNewTokens_->setValue(128);
  form->addRow(tr("Target"), withBrowse(target_, Browse::Directory));
  form->addRow(tr("Drafters"), withBrowse(drafters_, Browse::AddDirectory));
  form->addRow(tr("Prompts"), withBrowse(prompts_, Browse::OpenFile));
  form->addRow(tr("Session"), withBrowse(session_, Browse::SaveFile));
  form->addRow(tr("Run on"), prefix_);
  form->addRow(tr("Engine"), withBrowse(engine_, Browse::Executable));
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Dtype"), dtype_);
  form->addRow(tr("Modes"), modes);
  form->addRow(tr("Mask variants"), variantRow);
  form->addRow(tr("DDTree budget"), budget_);
  form->addRow(tr("Max new tokens"), maxNewTokens_);
  form->addRow(tr("Sampling"), samplingRow());
  stepCounting_ = new QComboBox;
  stepCounting_->addItem(tr("dflash 0.1.0 (last block shortened, counted to the budget)"), QStringLiteral("dflash"));
  stepCounting_->addItem(tr("full blocks (every block counted in full)"), QStringLiteral("full-blocks"));
  form->addRow(tr("Step counting"), stepCounting_);

  progress_ = new QProgressBar;
  status_ = new QLabel(tr("Not started"));
  status_->setObjectName(QStringLiteral("runStatus"));
  status_->setWordWrap(true);
  summary_ = new QPlainTextEdit;
  summary_->setReadOnly(true);
  summary_->setPlaceholderText(tr("The tau of each run appears here when the evaluation ends."));
  run_ = new QPushButton(tr("Run"));
  cancel_ = new QPushButton(tr("Cancel run"));
  cancel_->setEnabled(false);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addButton(run_, QDialogButtonBox::ActionRole);
  buttons->addButton(cancel_, QDialogButtonBox::ActionRole);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(summary_);
  layout->addWidget(buttons);

  connect(run_, &QPushButton::clicked, this, &RunDialog::startRun);
  connect(cancel_, &QPushButton::clicked, client_, &EngineClient::cancel);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);
  connect(client_, &EngineClient::engineReady, status_, &QLabel::setText);
  connect(client_, &EngineClient::sessionCreated, this, &RunDialog::sessionStarted);
  connect(client_, &EngineClient::progress, this, [this](qint64 done, qint64 total, double eta, const QString& current) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(done));
    status_->setText(tr("%1 — %2 of %3 done, about %4 left").arg(current).arg(done).arg(total).arg(formatSeconds(eta)));
  });
  connect(client_, &EngineClient::finished, this, [this](const QString& summary) {
    setRunning(false);
    status_->setText(tr("Finished"));
    summary_->setPlainText(summary);
  });
  connect(client_, &EngineClient::cancelled, this, [this](int promptsKept) {
    setRunning(false);
    status_->setText(tr("Cancelled, %1 %2 kept in %3")
                         .arg(promptsKept)
                         .arg(promptsKept == 1 ? tr("prompt") : tr("prompts"), session_->text().trimmed()));
  });
  connect(client_, &EngineClient::failed, this, [this](const QString& message) {
    setRunning(false);
    status_->setText(tr("Failed"));
    summary_->setPlainText(message);
    emit engineFailed(message);
  });
  restoreForm();
}

QWidget* RunDialog::withBrowse(QLineEdit* field, Browse kind) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(field, 1);
  auto* button = new QPushButton(tr("Browse..."));
  button->setObjectName(field->objectName() + QStringLiteral("Browse"));
  layout->addWidget(button);
  connect(button, &QPushButton::clicked, this, [this, field, kind] {
    const QString current = field->text().trimmed();
    const QString start = kind == Browse::AddDirectory ? current.section(';', -1).trimmed() : current;
    QString chosen;
    switch (kind) {
      case Browse::Directory:
      case Browse::AddDirectory:
        chosen = QFileDialog::getExistingDirectory(this, tr("Choose a directory"), start);
        break;
      case Browse::OpenFile:
        chosen = QFileDialog::getOpenFileName(this, tr("Choose the prompts"), start,
                                              tr("Prompts (*.jsonl *.json);;All files (*)"));
        break;
      case Browse::SaveFile:
        chosen = QFileDialog::getSaveFileName(this, tr("Write the session to"), start,
                                              tr("DFlash sessions (*.dfi);;All files (*)"));
        break;
      case Browse::Executable:
        chosen = QFileDialog::getOpenFileName(this, tr("Choose the dflash-eval executable"), start);
        break;
    }
    if (chosen.isEmpty()) return;
    // Drafters are a list: a chosen directory is added to it.
    field->setText(kind == Browse::AddDirectory && !current.isEmpty() ? current + QLatin1Char(';') + chosen : chosen);
  });
  return row;
}

// The live loop's sampling, as run's --temperature, --top-p, --top-k, --seed and --samples.
QHBoxLayout* RunDialog::samplingRow() {
  temperature_ = new QDoubleSpinBox;
  temperature_->setObjectName(QStringLiteral("temperatureField"));
  temperature_->setRange(0, 10);
  temperature_->setSingleStep(0.1);
  temperature_->setSpecialValueText(tr("greedy"));
  topP_ = new QDoubleSpinBox;
  topP_->setRange(0.01, 1);
  topP_->setSingleStep(0.05);
  topP_->setValue(1);
  topK_ = new QSpinBox;
  topK_->setRange(0, 1'000'000);
  topK_->setSpecialValueText(tr("all"));
  seed_ = new QSpinBox;
  seed_->setRange(0, 1'000'000'000);
  samples_ = new QSpinBox;
  samples_->setObjectName(QStringLiteral("samplesField"));
  samples_->setRange(1, 1000);
  auto* row = new QHBoxLayout;
  for (auto [label, box] : {std::pair{tr("T"), static_cast<QWidget*>(temperature_)}, {tr("top-p"), topP_},
                            {tr("top-k"), topK_}, {tr("seed"), seed_}, {tr("repeats"), samples_}}) {
    row->addWidget(new QLabel(label));
    row->addWidget(box);
  }
  row->addStretch();
  // Filters, seed and repeats mean nothing to a greedy run.
  auto update = [this] {
    for (QWidget* w : {static_cast<QWidget*>(topP_), static_cast<QWidget*>(topK_), static_cast<QWidget*>(seed_),
                       static_cast<QWidget*>(samples_)})
      w->setEnabled(temperature_->value() > 0);
  };
  connect(temperature_, &QDoubleSpinBox::valueChanged, this, update);
  update();
  return row;
}

// The last values run with, so a second evaluation starts from the first's form. The engine
// named by DFLASH_EVAL wins over a remembered one (the environment is the more recent choice).
void RunDialog::restoreForm() {
  QSettings settings;
  settings.beginGroup(kRunGroup);
  for (const auto& [key, field] : formFields())
    if (const QString value = settings.value(key).toString(); !value.isEmpty()) field->setText(value);
  if (const QString device = settings.value(QStringLiteral("device")).toString(); !device.isEmpty())
    device_->setCurrentText(device);
  if (const int dtype = dtype_->findText(settings.value(QStringLiteral("dtype")).toString()); dtype >= 0)
    dtype_->setCurrentIndex(dtype);
  budget_->setValue(settings.value(QStringLiteral("ddtree_budget"), budget_->value()).toInt());
  maxNewTokens_->setValue(settings.value(QStringLiteral("max_new_tokens"), maxNewTokens_->value()).toInt());
  temperature_->setValue(settings.value(QStringLiteral("temperature"), temperature_->value()).toDouble());
  topP_->setValue(settings.value(QStringLiteral("top_p"), topP_->value()).toDouble());
  topK_->setValue(settings.value(QStringLiteral("top_k"), topK_->value()).toInt());
  seed_->setValue(settings.value(QStringLiteral("seed"), seed_->value()).toInt());
  samples_->setValue(settings.value(QStringLiteral("samples"), samples_->value()).toInt());
  if (const int counting = stepCounting_->findData(settings.value(QStringLiteral("step_counting"))); counting >= 0)
    stepCounting_->setCurrentIndex(counting);
  const QString variable = qEnvironmentVariable("DFLASH_EVAL");
  if (!variable.isEmpty()) {
    engine_->setText(variable);
  } else if (needsLocating(engine_->text())) {
    const EngineLocation located = locateEngine();
    engine_->setText(located.found() ? located.path : QString::fromLatin1(kEngineName));
  }
}

void RunDialog::rememberForm() const {
  QSettings settings;
  settings.beginGroup(kRunGroup);
  for (const auto& [key, field] : formFields()) settings.setValue(key, field->text().trimmed());
  settings.setValue(QStringLiteral("device"), device_->currentText());
  settings.setValue(QStringLiteral("dtype"), dtype_->currentText());
  settings.setValue(QStringLiteral("ddtree_budget"), budget_->value());
  settings.setValue(QStringLiteral("max_new_tokens"), maxNewTokens_->value());
  settings.setValue(QStringLiteral("temperature"), temperature_->value());
  settings.setValue(QStringLiteral("top_p"), topP_->value());
  settings.setValue(QStringLiteral("top_k"), topK_->value());
  settings.setValue(QStringLiteral("seed"), seed_->value());
  settings.setValue(QStringLiteral("samples"), samples_->value());
  settings.setValue(QStringLiteral("step_counting"), stepCounting_->currentData());
}

std::vector<std::pair<QString, QLineEdit*>> RunDialog::formFields() const {
  return {{QStringLiteral("target"), target_},   {QStringLiteral("drafters"), drafters_},
          {QStringLiteral("prompts"), prompts_}, {QStringLiteral("session"), session_},
          {QStringLiteral("prefix"), prefix_},   {QStringLiteral("engine"), engine_}};
}

QLineEdit* RunDialog::pathField(const QString& name, const QString& placeholder) {
  auto* field = new QLineEdit;
  field->setObjectName(name + QStringLiteral("Field"));
  field->setPlaceholderText(placeholder);
  field->setMinimumWidth(420);
  return field;
}

void RunDialog::setPaths(const QString& target, const QStringList& drafters, const QString& prompts,
                         const QString& session) {
  target_->setText(target);
  drafters_->setText(drafters.join(';'));
  prompts_->setText(prompts);
  session_->setText(session);
}

void RunDialog::setEngine(const QString& commandPrefix, const QString& enginePath) {
  prefix_->setText(commandPrefix);
  engine_->setText(enginePath);
}

EngineLaunch RunDialog::launch() const {
  EngineLaunch launch;
  launch.commandPrefix = QProcess::splitCommand(prefix_->text());
  launch.enginePath = engine_->text().trimmed();
  return launch;
}

QString RunDialog::validationError() const {
  if (target_->text().trimmed().isEmpty()) return tr("Choose a target model directory.");
  if (drafters_->text().trimmed().isEmpty()) return tr("Choose at least one drafter directory.");
  if (prompts_->text().trimmed().isEmpty()) return tr("Choose a prompts file.");
  if (session_->text().trimmed().isEmpty()) return tr("Choose where to write the session.");
  if (!live_->isChecked() && !teacherForced_->isChecked() && !ddtree_->isChecked()) return tr("Choose a mode.");
  if (std::none_of(variants_.begin(), variants_.end(), [](QCheckBox* b) { return b->isChecked(); }))
    return tr("Choose a mask variant.");
  return {};
}

void RunDialog::startRun() {
  if (const QString error = validationError(); !error.isEmpty()) {
    status_->setText(error);
    return;
  }
  protocol::RunOptions options;
  options.target = target_->text().trimmed().toStdString();
  options.drafters = toStrings(drafters_->text().split(';', Qt::SkipEmptyParts));
  options.prompts = prompts_->text().trimmed().toStdString();
  options.modes.clear();
  if (live_->isChecked()) options.modes.push_back("live");
  if (teacherForced_->isChecked()) options.modes.push_back("teacher-forced");
  if (ddtree_->isChecked()) options.modes.push_back("ddtree");
  options.maskVariants.clear();
  for (QCheckBox* box : variants_)
    if (box->isChecked()) options.maskVariants.push_back(box->text().toStdString());
  options.device = device_->currentText().toStdString();
  options.dtype = dtype_->currentText().toStdString();
  options.ddtreeBudget = budget_->value();
  options.maxNewTokens = maxNewTokens_->value();
  options.temperature = temperature_->value();
  if (options.temperature > 0) {
    options.topP = topP_->value();
    options.topK = topK_->value();
    options.seed = seed_->value();
    options.samples = samples_->value();
  }
  options.stepCounting = stepCounting_->currentData().toString().toStdString();
  const EngineLaunch engine = launch();
  rememberForm();
  summary_->clear();
  progress_->setRange(0, 0);  // busy until the first progress frame
  status_->setText(tr("Starting the engine…"));
  setRunning(true);
  client_->start(engine, options, session_->text().trimmed());
}

void RunDialog::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (!running) progress_->setRange(0, std::max(progress_->maximum(), 1));
}

}  // namespace dfi::ui
