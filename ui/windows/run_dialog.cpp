#include "run_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QVBoxLayout>

#include "engine/engine_client.h"
#include "engine/engine_locator.h"
#include "dfi/analysis/attention_mask.h"
#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/session/record_fields.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::ui {
namespace {

std::vector<std::filesystem::path> toPaths(const QStringList& list) {
  std::vector<std::filesystem::path> out;
  for (const QString& s : list) out.emplace_back(s.trimmed().toStdString());
  return out;
}

// The remembered forms' QSettings groups: an evaluation's, a diagnosis's.
const QString kRunGroup = QStringLiteral("run");
const QString kDiagnoseGroup = QStringLiteral("diagnose");

// The first name `path` can take that no file has: run.dfi -> run-2.dfi, run-3.dfi...
QString freeName(const QString& path) {
  const QFileInfo info(path);
  for (int n = 2;; ++n) {
    const QString candidate =
        info.dir().filePath(QStringLiteral("%1-%2.%3").arg(info.completeBaseName()).arg(n).arg(info.suffix()));
    if (!QFileInfo::exists(candidate)) return candidate;
  }
}

// What an existing session holds, in words, for the question about it.
QString describeExisting(const QString& path, bool* readable) {
  try {
    session::Reader reader(path.toStdString());
    const std::size_t runs = reader.runs().size();
    *readable = true;
    return runs == 1 ? QObject::tr("%1 holds 1 run.").arg(path) : QObject::tr("%1 holds %2 runs.").arg(path).arg(runs);
  } catch (const Error& e) {
    *readable = false;
    return QObject::tr("%1 exists but is not a session this version can add to: %2")
        .arg(path, QString::fromStdString(e.what()));
  }
}

// A model directory the engine will read, when the engine runs here: the form says which is missing.
QString missingModel(const QString& dir, const QString& what) {
  if (!QFileInfo(dir).isDir()) return QObject::tr("The %1 directory %2 does not exist.").arg(what, dir);
  if (!QFileInfo::exists(QDir(dir).filePath(QStringLiteral("config.json"))))
    return QObject::tr("The %1 directory %2 has no config.json.").arg(what, dir);
  return {};
}

QString formatSeconds(double s) {
  return s < 90 ? QStringLiteral("%1 s").arg(qRound(s)) : QStringLiteral("%1 min").arg(s / 60, 0, 'f', 1);
}

}  // namespace

RunDialog::RunDialog(QWidget* parent, Kind kind) : QDialog(parent), kind_(kind), client_(new EngineClient(this)) {
  const bool diagnosis = kind_ == Kind::Diagnosis;
  setWindowTitle(diagnosis ? tr("Diagnose drafters") : tr("Run an evaluation"));
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
  limit_ = new QSpinBox;
  limit_->setObjectName(QStringLiteral("limitField"));
  limit_->setRange(0, 10'000'000);
  limit_->setSpecialValueText(tr("all"));
  limit_->setToolTip(tr("Evaluate only the first N prompts of the file (the CLI's --limit)"));
  promptCount_ = new QLabel;
  promptCount_->setObjectName(QStringLiteral("promptCount"));
  maxNewTokens_ = new QSpinBox;
  maxNewTokens_->setObjectName(QStringLiteral("maxNewTokensField"));
  maxNewTokens_->setRange(1, 32768);
  maxNewTokens_->setValue(128);
  form->addRow(tr("Target"), withBrowse(target_, Browse::Directory));
  form->addRow(tr("Drafters"), withBrowse(drafters_, Browse::AddDirectory));
  form->addRow(tr("Prompts"), withBrowse(prompts_, Browse::Prompts));
  auto* limitRow = new QHBoxLayout;
  limitRow->addWidget(limit_);
  limitRow->addWidget(promptCount_, 1);
  form->addRow(tr("Prompt limit"), limitRow);
  form->addRow(tr("Session"), withBrowse(session_, Browse::SaveFile));
  form->addRow(tr("Run on"), prefix_);
  form->addRow(tr("Engine"), withBrowse(engine_, Browse::Executable));
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Dtype"), dtype_);
  form->addRow(tr("Modes"), modes);
  form->addRow(tr("Mask variants"), variantRow);
  form->addRow(tr("DDTree budget"), budget_);
  form->addRow(tr("Max new tokens"), maxNewTokens_);
  QHBoxLayout* sampling = samplingRow();
  form->addRow(tr("Sampling"), sampling);
  stepCounting_ = new QComboBox;
  stepCounting_->addItem(tr("dflash 0.1.0 (last block shortened, counted to the budget)"),
                         QString::fromUtf8(enumName(settings::StepCounting::Dflash).data()));
  stepCounting_->addItem(tr("full blocks (every block counted in full)"),
                         QString::fromUtf8(enumName(settings::StepCounting::FullBlocks).data()));
  form->addRow(tr("Step counting"), stepCounting_);
  chatTemplateKwargs_ = new QLineEdit;
  chatTemplateKwargs_->setObjectName(QStringLiteral("chatTemplateKwargsField"));
  chatTemplateKwargs_->setPlaceholderText(tr("optional: JSON, e.g. {\"enable_thinking\": false}"));
  chatTemplateKwargs_->setToolTip(tr("Further variables of the target's chat template, as vLLM's and SGLang's "
                                     "chat_template_kwargs (the CLI's --chat-template-kwargs)"));
  form->addRow(tr("Template variables"), chatTemplateKwargs_);
  // A diagnosis's own: hidden states dumped by the training pipeline, checked tap by tap
  // against the target's layers, and a time budget that limits the prompts taken.
  trainingDump_ = pathField(QStringLiteral("trainingDump"),
                            tr("optional: the training pipeline's hidden states (.safetensors)"));
  trainingDump_->setToolTip(tr("A file on the engine's machine: compared with every target layer, tap by tap, "
                               "before any compute"));
  budgetMinutes_ = new QDoubleSpinBox;
  budgetMinutes_->setObjectName(QStringLiteral("budgetMinutesField"));
  budgetMinutes_->setRange(0, 10'000);
  budgetMinutes_->setDecimals(1);
  budgetMinutes_->setSuffix(tr(" min"));
  budgetMinutes_->setSpecialValueText(tr("none (every prompt)"));
  budgetMinutes_->setToolTip(tr("Stop taking new prompts when the battery's projected time would pass this; every "
                                "hypothesis is still measured on the prompts taken"));
  trainingTemplate_ = pathField(QStringLiteral("trainingTemplate"),
                                tr("optional: the chat template the training data was rendered with (.jinja)"));
  trainingTemplate_->setToolTip(tr("A file on the engine's machine: its rendering of the first prompt is compared "
                                   "with the target's template (default: the template the drafter ships, if any)"));
  QWidget* trainingDumpRow = withBrowse(trainingDump_, Browse::TrainingDump);
  QWidget* trainingTemplateRow = withBrowse(trainingTemplate_, Browse::TrainingTemplate);
  form->addRow(tr("Training dump"), trainingDumpRow);
  form->addRow(tr("Training template"), trainingTemplateRow);
  form->addRow(tr("Time budget"), budgetMinutes_);
  // Each kind shows the rows its request reads: a diagnosis chooses its own modes, masks,
  // anchors and sampling (greedy live anchors), and counts its steps one way.
  for (QLayout* row : {static_cast<QLayout*>(modes), static_cast<QLayout*>(variantRow), static_cast<QLayout*>(sampling)})
    form->setRowVisible(row, !diagnosis);
  for (QWidget* row : {static_cast<QWidget*>(budget_), static_cast<QWidget*>(stepCounting_)})
    form->setRowVisible(row, !diagnosis);
  for (QWidget* row : {trainingDumpRow, trainingTemplateRow, static_cast<QWidget*>(budgetMinutes_)})
    form->setRowVisible(row, diagnosis);

  progress_ = new QProgressBar;
  status_ = new QLabel(tr("Not started"));
  status_->setObjectName(QStringLiteral("runStatus"));
  status_->setWordWrap(true);
  summary_ = new QPlainTextEdit;
  summary_->setReadOnly(true);
  summary_->setLineWrapMode(QPlainTextEdit::NoWrap);  // the CLI's table: aligned columns
  summary_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  summary_->setPlaceholderText(diagnosis ? tr("The Diagnosis panel ranks the hypotheses as they are measured; "
                                              "what was recorded is summed up here when the diagnosis ends.")
                                           : tr("The tau of each run, with its interval and the paired differences, "
                                                "appears here when the evaluation ends, as `dflash-eval run` prints it."));
  run_ = new QPushButton(diagnosis ? tr("Diagnose") : tr("Run"));
  cancel_ = new QPushButton(diagnosis ? tr("Cancel diagnosis") : tr("Cancel run"));
  run_->setObjectName(QStringLiteral("startButton"));
  cancel_->setObjectName(QStringLiteral("cancelButton"));
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
  // The engine stops at its next check (a diagnosis: once the prompt in progress is done).
  connect(cancel_, &QPushButton::clicked, this, [this] {
    cancel_->setEnabled(false);
    status_->setText(kind_ == Kind::Diagnosis ? tr("Cancelling: the engine stops once the prompt in progress is done…")
                                              : tr("Cancelling…"));
    client_->cancel();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::hide);
  connect(client_, &EngineClient::engineReady, status_, &QLabel::setText);
  connect(client_, &EngineClient::sessionCreated, this, &RunDialog::sessionStarted);
  connect(client_, &EngineClient::progress, this, [this](qint64 done, qint64 total, double eta, const QString& current) {
    if (done == 0) {  // still loading (the models, the prompts): the stage, with a busy bar
      progress_->setRange(0, 0);
      status_->setText(tr("%1…").arg(current));
      return;
    }
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
    const QString prompts = (promptsKept == 1 ? tr("%1 prompt") : tr("%1 prompts")).arg(promptsKept);
    status_->setText((kind_ == Kind::Diagnosis ? tr("Cancelled; the hypotheses measured so far (on %1) are kept in %2")
                                               : tr("Cancelled, %1 kept in %2"))
                         .arg(prompts, session_->text().trimmed()));
  });
  connect(client_, &EngineClient::failed, this, [this](const QString& message) {
    setRunning(false);
    status_->setText(tr("Failed"));
    summary_->setPlainText(message);
    emit engineFailed(message);
  });
  for (QLineEdit* field : {prompts_, prefix_}) connect(field, &QLineEdit::textChanged, this, &RunDialog::countPrompts);
  connect(limit_, &QSpinBox::valueChanged, this, &RunDialog::countPrompts);
  restoreForm();
  countPrompts();
}

// How many prompts the run will take, before it starts: the file's prompt lines (JSONL, one
// prompt per non-blank line) under the limit. A file on another machine cannot be counted here.
void RunDialog::countPrompts() {
  const QString path = prompts_->text().trimmed();
  QFile file(path);
  if (!prefix_->text().trimmed().isEmpty() || path.isEmpty() || !file.open(QIODevice::ReadOnly)) {
    promptCount_->clear();
    return;
  }
  qint64 lines = 0;
  while (!file.atEnd()) lines += file.readLine().trimmed().isEmpty() ? 0 : 1;
  const qint64 taken = limit_->value() > 0 ? std::min<qint64>(lines, limit_->value()) : lines;
  promptCount_->setText(taken == lines ? tr("%1 prompts in the file").arg(lines)
                                       : tr("%1 of the file's %2 prompts").arg(taken).arg(lines));
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
      case Browse::Prompts:
        chosen = QFileDialog::getOpenFileName(this, tr("Choose the prompts"), start,
                                              tr("Prompts (*.jsonl *.json);;All files (*)"));
        break;
      case Browse::TrainingDump:
        chosen = QFileDialog::getOpenFileName(this, tr("Choose the training pipeline's hidden states"), start,
                                              tr("Safetensors (*.safetensors);;All files (*)"));
        break;
      case Browse::TrainingTemplate:
        chosen = QFileDialog::getOpenFileName(this, tr("Choose the training data's chat template"), start,
                                              tr("Jinja templates (*.jinja *.j2);;All files (*)"));
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

QString RunDialog::settingsGroup() const { return kind_ == Kind::Diagnosis ? kDiagnoseGroup : kRunGroup; }

// The last values run with, so a second evaluation starts from the first's form; a first
// diagnosis starts from the last evaluation's paths (its session excepted: a diagnosis
// should not overwrite them). The engine named by DFLASH_EVAL wins over a remembered one
// (the environment is the more recent choice).
void RunDialog::restoreForm() {
  QSettings settings;
  for (const auto& [key, field] : formFields()) {
    QString value = settings.value(settingsGroup() + '/' + key).toString();
    if (value.isEmpty() && kind_ == Kind::Diagnosis && key != QStringLiteral("session"))
      value = settings.value(kRunGroup + '/' + key).toString();
    if (!value.isEmpty()) field->setText(value);
  }
  settings.beginGroup(settingsGroup());
  if (const QString device = settings.value(QStringLiteral("device")).toString(); !device.isEmpty())
    device_->setCurrentText(device);
  if (const int dtype = dtype_->findText(settings.value(QStringLiteral("dtype")).toString()); dtype >= 0)
    dtype_->setCurrentIndex(dtype);
  budget_->setValue(settings.value(QStringLiteral("ddtree_budget"), budget_->value()).toInt());
  maxNewTokens_->setValue(settings.value(QStringLiteral("max_new_tokens"), maxNewTokens_->value()).toInt());
  limit_->setValue(settings.value(QStringLiteral("limit"), limit_->value()).toInt());
  temperature_->setValue(settings.value(QStringLiteral("temperature"), temperature_->value()).toDouble());
  topP_->setValue(settings.value(QStringLiteral("top_p"), topP_->value()).toDouble());
  topK_->setValue(settings.value(QStringLiteral("top_k"), topK_->value()).toInt());
  seed_->setValue(settings.value(QStringLiteral("seed"), seed_->value()).toInt());
  samples_->setValue(settings.value(QStringLiteral("samples"), samples_->value()).toInt());
  if (const int counting = stepCounting_->findData(settings.value(QStringLiteral("step_counting"))); counting >= 0)
    stepCounting_->setCurrentIndex(counting);
  trainingDump_->setText(settings.value(QStringLiteral("training_dump")).toString());
  trainingTemplate_->setText(settings.value(QStringLiteral("training_template")).toString());
  chatTemplateKwargs_->setText(settings.value(QStringLiteral("chat_template_kwargs")).toString());
  budgetMinutes_->setValue(settings.value(QStringLiteral("budget_minutes"), budgetMinutes_->value()).toDouble());
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
  settings.beginGroup(settingsGroup());
  for (const auto& [key, field] : formFields()) settings.setValue(key, field->text().trimmed());
  settings.setValue(QStringLiteral("device"), device_->currentText());
  settings.setValue(QStringLiteral("dtype"), dtype_->currentText());
  settings.setValue(QStringLiteral("ddtree_budget"), budget_->value());
  settings.setValue(QStringLiteral("max_new_tokens"), maxNewTokens_->value());
  settings.setValue(QStringLiteral("limit"), limit_->value());
  settings.setValue(QStringLiteral("temperature"), temperature_->value());
  settings.setValue(QStringLiteral("top_p"), topP_->value());
  settings.setValue(QStringLiteral("top_k"), topK_->value());
  settings.setValue(QStringLiteral("seed"), seed_->value());
  settings.setValue(QStringLiteral("samples"), samples_->value());
  settings.setValue(QStringLiteral("step_counting"), stepCounting_->currentData());
  settings.setValue(QStringLiteral("training_dump"), trainingDump_->text().trimmed());
  settings.setValue(QStringLiteral("training_template"), trainingTemplate_->text().trimmed());
  settings.setValue(QStringLiteral("chat_template_kwargs"), chatTemplateKwargs_->text().trimmed());
  settings.setValue(QStringLiteral("budget_minutes"), budgetMinutes_->value());
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
  if (!QFileInfo(session_->text().trimmed()).absoluteDir().exists())
    return tr("The folder of %1 does not exist.").arg(session_->text().trimmed());
  if (prefix_->text().trimmed().isEmpty()) {  // the engine runs here: its inputs can be checked now
    if (QString missing = missingModel(target_->text().trimmed(), tr("target")); !missing.isEmpty()) return missing;
    for (const QString& drafter : drafters_->text().split(';', Qt::SkipEmptyParts))
      if (QString missing = missingModel(drafter.trimmed(), tr("drafter")); !missing.isEmpty()) return missing;
    if (!QFileInfo(prompts_->text().trimmed()).isFile())
      return tr("The prompts file %1 does not exist.").arg(prompts_->text().trimmed());
  }
  if (kind_ == Kind::Evaluation) {  // a diagnosis chooses its own modes and masks
    if (!live_->isChecked() && !teacherForced_->isChecked() && !ddtree_->isChecked()) return tr("Choose a mode.");
    if (std::none_of(variants_.begin(), variants_.end(), [](QCheckBox* b) { return b->isChecked(); }))
      return tr("Choose a mask variant.");
  }
  try {
    if (kind_ == Kind::Diagnosis)
      settings::validate(diagnoseSettings());
    else
      settings::validate(runSettings());
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// The rows both kinds show: what `diagnose` reads of the run settings too.
settings::RunSettings RunDialog::runSettings() const {
  settings::RunSettings s;
  s.target = target_->text().trimmed().toStdString();
  s.drafters = toPaths(drafters_->text().split(';', Qt::SkipEmptyParts));
  s.prompts = prompts_->text().trimmed().toStdString();
  s.model.devices = settings::parseDeviceList(device_->currentText().trimmed().toStdString());
  s.model.dtype = dtype_->currentText().toStdString();
  s.maxNewTokens = maxNewTokens_->value();
  if (limit_->value() > 0) s.limit = limit_->value();
  s.chatTemplateKwargs = chatTemplateKwargs_->text().trimmed().toStdString();
  if (kind_ == Kind::Diagnosis) return s;
  s.modes.clear();
  if (live_->isChecked()) s.modes.push_back(settings::EvaluationMode::Live);
  if (teacherForced_->isChecked()) s.modes.push_back(settings::EvaluationMode::TeacherForced);
  if (ddtree_->isChecked()) s.modes.push_back(settings::EvaluationMode::DDTree);
  s.maskVariants.clear();
  for (int i = 0; i < variants_.size(); ++i)
    if (variants_[i]->isChecked()) s.maskVariants.push_back(analysis::kAllMaskVariants[static_cast<std::size_t>(i)]);
  s.ddtreeBudget = budget_->value();
  s.sampling.temperature = temperature_->value();
  if (!s.sampling.greedy()) {
    s.sampling.topP = topP_->value();
    s.sampling.topK = topK_->value();
    s.sampling.seed = static_cast<std::uint64_t>(seed_->value());
    s.samples = samples_->value();
  }
  s.stepCounting = parseEnum<settings::StepCounting>(stepCounting_->currentData().toString().toStdString())
                       .value_or(settings::StepCounting::Dflash);
  return s;
}

settings::DiagnoseSettings RunDialog::diagnoseSettings() const {
  settings::DiagnoseSettings s{.evaluation = runSettings()};
  if (const QString dump = trainingDump_->text().trimmed(); !dump.isEmpty()) s.trainingDump = dump.toStdString();
  if (const QString file = trainingTemplate_->text().trimmed(); !file.isEmpty()) s.trainingTemplate = file.toStdString();
  if (budgetMinutes_->value() > 0) s.budgetMinutes = budgetMinutes_->value();
  return s;
}

QString RunDialog::sessionPath() const { return session_->text().trimmed(); }

// An existing session is never replaced unasked: appending is the default, a new name or a
// confirmed replacement the alternatives. Nothing chosen: no run.
std::optional<session::OpenMode> RunDialog::chooseSessionMode() {
  const QString path = session_->text().trimmed();
  if (!QFileInfo::exists(path)) return session::OpenMode::CreateNew;
  bool readable = false;
  QMessageBox box(QMessageBox::Question, tr("The session exists"), describeExisting(path, &readable),
                  QMessageBox::Cancel, this);
  box.setObjectName(QStringLiteral("existingSessionBox"));
  box.setInformativeText(readable ? tr("Add the new runs to it, write them to a new file, or replace it?")
                                  : tr("Write the runs to a new file, or replace it?"));
  QPushButton* append = readable ? box.addButton(tr("Append"), QMessageBox::AcceptRole) : nullptr;
  QPushButton* newName = box.addButton(tr("New File"), QMessageBox::AcceptRole);
  QPushButton* replace = box.addButton(tr("Replace..."), QMessageBox::DestructiveRole);
  box.setDefaultButton(append ? append : newName);
  box.exec();
  if (append && box.clickedButton() == append) return session::OpenMode::Append;
  if (box.clickedButton() == newName) {
    session_->setText(freeName(path));
    return session::OpenMode::CreateNew;
  }
  if (box.clickedButton() != replace) return std::nullopt;
  QMessageBox confirm(QMessageBox::Warning, tr("Replace the session"),
                      tr("Replace %1? Everything it holds is deleted once the engine starts recording.").arg(path),
                      QMessageBox::Cancel, this);
  confirm.setObjectName(QStringLiteral("confirmReplaceBox"));
  QPushButton* yes = confirm.addButton(tr("Replace"), QMessageBox::DestructiveRole);
  confirm.setDefaultButton(QMessageBox::Cancel);
  confirm.exec();
  if (confirm.clickedButton() == yes) return session::OpenMode::Overwrite;
  return std::nullopt;
}

void RunDialog::startRun() {
  if (const QString error = validationError(); !error.isEmpty()) {
    status_->setText(error);
    return;
  }
  const std::optional<session::OpenMode> mode = chooseSessionMode();
  if (!mode) {
    status_->setText(tr("Not started: the session was left as it is."));
    return;
  }
  const EngineLaunch engine = launch();
  rememberForm();
  summary_->clear();
  progress_->setRange(0, 0);  // busy until the first progress frame
  status_->setText(tr("Starting the engine…"));
  setRunning(true);
  if (kind_ == Kind::Diagnosis)
    client_->startDiagnosis(engine, diagnoseSettings(), session_->text().trimmed(), *mode);
  else
    client_->start(engine, runSettings(), session_->text().trimmed(), *mode);
}

void RunDialog::setRunning(bool running) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  if (!running) progress_->setRange(0, std::max(progress_->maximum(), 1));
}

}  // namespace dfi::ui
