// The token table model under QAbstractItemModelTester (with its per-slot garble marks, and the
// token panel's strip marking the same slots), and the log relay bringing spdlog lines from
// other threads (the response rebuilt from step records: tests/core/analysis/test_response_sequence.cpp).

#include <thread>

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QTableView>
#include <QSignalSpy>
#include <QtTest>

#include "session/file_session_source.h"
#include "engine/log_relay.h"
#include "session/session_context.h"
#include "dfi/analysis/garble.h"
#include "dfi/base/log.h"
#include "gui_test_support.h"
#include "models/token_table_model.h"
#include "session_fixture.h"
#include "widgets/token_strip.h"
#include "panels/token_view.h"

using namespace dfi::ui;
using dfi::session::StepRecord;

class TestModels : public QObject {
  Q_OBJECT
 private slots:
  void tokenTableShowsTheBlock() {
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 7, 4);  // accepts 5 of 7
    QCOMPARE(step.acceptedCount, 5);
    model.setBlock(step, 4, [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); });
    QCOMPARE(model.rowCount(), 8);
    QCOMPARE(model.index(0, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("anchor"));
    QCOMPARE(model.index(5, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("accepted"));
    QCOMPARE(model.index(6, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("first mismatch"));
    QCOMPARE(model.index(7, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("not reached"));
    QCOMPARE(model.index(6, TokenTableModel::PositionColumn).data().toLongLong(), 26);
    QCOMPARE(model.index(6, TokenTableModel::TargetRankColumn).data().toString(), QStringLiteral("2"));
    QCOMPARE(model.index(6, TokenTableModel::DraftProbColumn).data().toString(), QStringLiteral("0.550"));
    // A target outside the stored top-k has no rank.
    step.topKIds[6 * 4 + 1] = 38;
    model.setBlock(step, 4, [](dfi::session::TokenId id) { return QString::number(id); });
    QCOMPARE(model.index(7, TokenTableModel::TargetRankColumn).data().toString(), QStringLiteral("> 4"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  // The token table's delegate lays each text out once: columns as wide as their text, the
  // text drawn inside its cell (elided when the column is narrower), nothing in empty cells.
  void tokenTableDrawsEachTextInItsCell() {
    TokenTableModel model;
    model.setBlock(dfi::fixture::fixtureStep(0, 0, 1, 20, 7, 4), 4,
                   [](dfi::session::TokenId id) { return QStringLiteral("token-%1-with-a-long-name").arg(id); });
    std::unique_ptr<QTableView> table(newTokenTable(&model));
    table->resize(1200, 300);  // every column, the optional ones included
    table->show();
    QVERIFY(QTest::qWaitForWindowExposed(table.get()));
    const QModelIndex prob = model.index(6, TokenTableModel::DraftProbColumn);
    const QFontMetrics metrics(table->font());
    QVERIFY(table->columnWidth(TokenTableModel::DraftProbColumn) >= metrics.horizontalAdvance(prob.data().toString()));
    // Dark pixels (text) inside a cell's rectangle, and none in the anchor's empty probability cell.
    auto inkIn = [&](const QImage& image, const QRect& cell) {
      int ink = 0;
      for (int y = cell.top(); y <= cell.bottom(); ++y)
        for (int x = cell.left(); x <= cell.right(); ++x) ink += qGray(image.pixel(x, y)) < 100;
      return ink;
    };
    QImage image = table->viewport()->grab().toImage();
    QVERIFY(inkIn(image, table->visualRect(prob)) > 10);
    QVERIFY(model.index(0, TokenTableModel::DraftProbColumn).data().toString().isEmpty());
    QCOMPARE(inkIn(image, table->visualRect(model.index(0, TokenTableModel::DraftProbColumn)).adjusted(2, 2, -2, -2)), 0);
    // A column narrower than its text: the text is cut at the cell's edge, never drawn over the next.
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table->setColumnWidth(TokenTableModel::DraftColumn, 40);
    table->setColumnHidden(TokenTableModel::TargetColumn, true);
    table->setColumnHidden(TokenTableModel::VerdictColumn, true);
    QApplication::processEvents();
    image = table->viewport()->grab().toImage();
    const QRect draft = table->visualRect(model.index(3, TokenTableModel::DraftColumn));
    QVERIFY(inkIn(image, draft) > 10);
    const QModelIndex next = model.index(3, table->horizontalHeader()->logicalIndexAt(draft.right() + 3));
    QVERIFY(next.data().toString().size() < 12);  // a short neighbour: long text there would be ours
    QRect neighbour = table->visualRect(next);
    neighbour.setLeft(neighbour.left() + metrics.horizontalAdvance(next.data().toString()) + 8);
    QCOMPARE(inkIn(image, neighbour.adjusted(0, 2, 0, -2)), 0);
  }

  // A diagnosis hypothesis's step holds drafts through its first rejection only: the slots
  // after it show no token, and say why.
  void tokenTableMarksSlotsWithoutADraft() {
    TokenTableModel model;
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 7, 4);  // accepts 5 of 7
    step.draftTokens[6] = dfi::analysis::kNoDraft;
    step.topKIds.clear();
    step.topKProbs.clear();
    model.setBlock(step, 0, [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); });
    QCOMPARE(model.index(6, TokenTableModel::DraftColumn).data().toString(), QStringLiteral("tok%1").arg(step.draftTokens[5]));
    QVERIFY(model.index(6, TokenTableModel::DraftColumn).data(Qt::ToolTipRole).toString().isEmpty());
    QCOMPARE(model.index(7, TokenTableModel::DraftColumn).data().toString(), QStringLiteral("\u2014"));
    QCOMPARE(model.index(7, TokenTableModel::VerdictColumn).data().toString(), QStringLiteral("not reached"));
    QVERIFY(model.index(7, TokenTableModel::DraftColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("first rejected slot")));
  }

  // A DFlash2 step shows which candidate its selector chose (amber where it overruled the
  // drafter's argmax); a sampled step shows each slot's acceptance test from its recorded p, q, u.
  void tokenTableShowsTheSelectorAndTheAcceptanceTest() {
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 3, 4);
    auto text = [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); };
    model.setBlock(step, 4, text);
    QVERIFY(!model.hasSelector() && !model.hasAcceptTest());
    step.candidateIds = {11, 12, 21, 22, 31, 32};  // 3 slots x 2 candidates
    step.candidateScores = {1.0f, 0.5f, 0.25f, 2.0f, 3.0f, -1.0f};
    step.chosenCandidates = {0, 1, 0};
    step.targetProbs = {0.5f, 0.25f, 0.125f};
    step.draftProbs = {0.75f, 0.5f, 0.5f};
    step.acceptUniforms = {0.5f, 0.75f, 0.125f};  // 0.375 < 0.5 passes; 0.375 >= 0.25 fails
    model.setBlock(step, 4, text);
    QVERIFY(model.hasSelector() && model.hasAcceptTest());
    auto cell = [&](int slot, int column) { return model.index(slot + 1, column); };
    QCOMPARE(cell(0, TokenTableModel::SelectorColumn).data().toString(), QStringLiteral("argmax"));
    QCOMPARE(cell(1, TokenTableModel::SelectorColumn).data().toString(), QStringLiteral("#2 over 'tok21'"));
    QVERIFY(cell(1, TokenTableModel::SelectorColumn).data(Qt::BackgroundRole).value<QColor>() !=
            cell(0, TokenTableModel::SelectorColumn).data(Qt::BackgroundRole).value<QColor>());
    const QString candidates = cell(1, TokenTableModel::SelectorColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(candidates.contains(QStringLiteral("2. tok22  2.000  <- chosen")), qPrintable(candidates));
    QCOMPARE(cell(0, TokenTableModel::AcceptTestColumn).data().toString(), QStringLiteral("0.375 < 0.5"));
    QCOMPARE(cell(1, TokenTableModel::AcceptTestColumn).data().toString(), QStringLiteral("0.375 >= 0.25"));
    QVERIFY(cell(1, TokenTableModel::AcceptTestColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("rejected")));
  }

  // A DSpark step shows each slot's confidence and, in brackets, the product up to it.
  void tokenTableShowsTheConfidenceAndThePrefixSurvival() {
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 3, 4);
    auto text = [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); };
    model.setBlock(step, 4, text);
    QVERIFY(!model.hasConfidence());
    QVERIFY(model.index(1, TokenTableModel::ConfidenceColumn).data().toString().isEmpty());
    step.draftConfidence = {0.75f, 0.5f, 0.25f};
    model.setBlock(step, 4, text);
    QVERIFY(model.hasConfidence());
    QCOMPARE(model.index(1, TokenTableModel::ConfidenceColumn).data().toString(), QStringLiteral("0.750 (0.750)"));
    QCOMPARE(model.index(3, TokenTableModel::ConfidenceColumn).data().toString(), QStringLiteral("0.250 (0.094)"));
    QVERIFY(model.index(0, TokenTableModel::ConfidenceColumn).data().toString().isEmpty());  // the anchor
  }

  // A teacher-forced step shows each slot's overlap (the chance sampling accepts it) and the
  // product up to it, over the slots that recorded one; a reduced vocabulary's draft ids are in
  // the draft's tooltip.
  void tokenTableShowsTheOverlapAndTheDraftIds() {
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 3, 0);
    auto text = [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); };
    model.setBlock(step, 0, text);
    QVERIFY(!model.hasOverlap());
    step.slotOverlap = {0.5f, 0.5f};  // the third slot past the sequence
    step.draftVocabIds = {7, -1, 3};
    model.setBlock(step, 0, text);
    QVERIFY(model.hasOverlap());
    QCOMPARE(model.index(2, TokenTableModel::OverlapColumn).data().toString(), QStringLiteral("0.500 (0.250)"));
    QVERIFY(model.index(3, TokenTableModel::OverlapColumn).data().toString().isEmpty());
    QVERIFY(model.index(1, TokenTableModel::DraftColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("draft id 7")));
    QVERIFY(model.index(2, TokenTableModel::DraftColumn).data(Qt::ToolTipRole).isNull());
  }

  // Each slot names the detectors that fired on it; the tooltip says what the pattern is and
  // whether the slot is part of what the drafter proposes or of the unreached tail.
  void tokenTableMarksGarblePerSlot() {
    namespace A = dfi::analysis;
    TokenTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 20, 7, 4);  // accepts 5 of 7: slot 5 is the first mismatch
    step.garbleFlags = {0, 0, 0, A::kGarbleRepeatedToken, A::kGarbleRepeatedToken, A::kGarbleRepeatedToken | A::kGarbleRepeatedSpan,
                        A::kGarbleMaskToken};
    model.setBlock(step, 4, [](dfi::session::TokenId id) { return QStringLiteral("tok%1").arg(id); });
    auto cell = [&](int slot) { return model.index(slot + 1, TokenTableModel::GarbleColumn); };  // row 0 is the anchor
    QCOMPARE(model.headerData(TokenTableModel::GarbleColumn, Qt::Horizontal).toString(), QStringLiteral("Garble"));
    QVERIFY(cell(0).data().toString().isEmpty());
    QVERIFY(!cell(0).data(Qt::ToolTipRole).isValid());
    QCOMPARE(cell(3).data().toString(), QStringLiteral("repeated-token"));
    QCOMPARE(cell(5).data().toString(), QStringLiteral("repeated-token, repeated-span"));
    QCOMPARE(cell(5).data(TokenTableModel::GarbleRole).toUInt(), uint(A::kGarbleRepeatedToken | A::kGarbleRepeatedSpan));
    const QString mismatch = cell(5).data(Qt::ToolTipRole).toString();
    QVERIFY2(mismatch.contains(QStringLiteral("repeated-token: a run of three or more identical tokens")), qPrintable(mismatch));
    QVERIFY(mismatch.contains(QStringLiteral("repeated-span: a span of 2-4 tokens")));
    QVERIFY(mismatch.contains(QStringLiteral("Part of what the drafter proposes")));
    QCOMPARE(cell(5).data(Qt::ForegroundRole).value<QColor>(), TokenTableModel::garbleColour());
    const QString tail = cell(6).data(Qt::ToolTipRole).toString();
    QVERIFY2(tail.startsWith(QStringLiteral("slot 7, draft 'tok")), qPrintable(tail));
    QVERIFY(tail.contains(QStringLiteral("mask-token: the mask token itself was drafted")));
    QVERIFY(tail.contains(QStringLiteral("After the first mismatch: not reached")));
    QVERIFY(cell(6).data(Qt::ForegroundRole).value<QColor>() != TokenTableModel::garbleColour());
  }

  // The token panel's strip underlines the committed tokens whose draft slot was flagged: an
  // accepted draft, and the bonus token where the first mismatch's draft was flagged.
  void tokenStripUnderlinesGarbledSlots() {
    test::isolateSettings();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("strip.dfi"));
    dfi::session::StepId id = 0;
    {
      dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
      const auto run = writer.addRun({.name = "drafter-good/live/reference", .blockSize = 8, .topK = 0});
      writer.addPrompt({.runId = run, .promptId = 0, .text = "<|im_start|>user\nwrite fizzbuzz<|im_end|>",
                        .promptTokens = dfi::fixture::fixturePromptTokens(0)});
      StepRecord step = dfi::fixture::fixtureStep(0, 0, 1, 10, 7, 0);  // accepts 5: slots 1-5, bonus at slot 6
      step.stepIndex = 0;
      step.runId = run;
      step.garbleFlags = {dfi::analysis::kGarbleAnchorEcho, 0, 0, 0, 0, dfi::analysis::kGarbleRepeatedToken, 0};
      id = writer.addStep(step);
      writer.close();
    }
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    TokenView view(&context);
    QVERIFY(context.open(path));
    context.select({context.runs()[0].runId, 0, id});
    const std::vector<TokenStrip::Chip>& chips = view.strip()->chips();
    QCOMPARE(static_cast<int>(chips.size()), 10 + 1 + 5 + 1);  // prompt, anchor, 5 accepted, bonus
    QCOMPARE(chips[11].underline, TokenTableModel::garbleColour());  // slot 1
    QVERIFY2(chips[11].toolTip.contains(QStringLiteral("anchor-echo:")), qPrintable(chips[11].toolTip));
    QVERIFY(!chips[12].underline.isValid());  // slot 2
    QCOMPARE(chips[16].underline, TokenTableModel::garbleColour());  // the bonus replaced slot 6's draft
    QVERIFY2(chips[16].toolTip.contains(QStringLiteral("The drafter proposed '#")) &&
                 chips[16].toolTip.contains(QStringLiteral("repeated-token:")),
             qPrintable(chips[16].toolTip));
    QVERIFY2(view.headline().contains(QStringLiteral("\"write fizzbuzz\"")), qPrintable(view.headline()));
    QVERIFY2(view.headline().contains(QStringLiteral("garble in what it proposes: repeated-token, anchor-echo")),
             qPrintable(view.headline()));
  }

  void entropyIsOverTheStoredTopK() {
    const float uniform[] = {0.25f, 0.25f, 0.25f, 0.25f};
    QVERIFY(std::abs(TokenTableModel::topKEntropy(uniform, 4) - std::log(4.0)) < 1e-6);
    const float certain[] = {1.0f, 0.0f};
    QCOMPARE(TokenTableModel::topKEntropy(certain, 2), 0.0);
  }

  // Lines logged on other threads arrive on the GUI thread, in order, batched.
  void logLinesCrossThreads() {
    LogRelay relay;
    QStringList received;
    int batches = 0;
    connect(&relay, &LogRelay::linesArrived, this, [&](const QVector<LogLine>& lines) {
      QCOMPARE(QThread::currentThread(), qApp->thread());
      ++batches;
      for (const LogLine& line : lines) received << line.text;
    });
    std::thread worker([] {
      for (int i = 0; i < 200; ++i) dfi::logger("test")->info("line {}", i);
    });
    worker.join();
    QTRY_COMPARE(received.size(), 200);
    QCOMPARE(received.front(), QStringLiteral("line 0"));
    QCOMPARE(received.back(), QStringLiteral("line 199"));
    QVERIFY(batches < 200);  // one queued call per burst, not one per line
  }
};

QTEST_MAIN(TestModels)
#include "test_models.moc"
