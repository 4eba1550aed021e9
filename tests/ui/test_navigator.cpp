// The navigator on a real session (written with the session Writer): the model's tree and
// figures, every filter (garble detectors on what the drafter proposes, one run), sorting a
// filtered tree, the search into token text, prompts by their first words, keyboard navigation
// into the SessionContext, selection sync, live steps from a file still being written, and a
// bad file reported rather than thrown.

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTreeView>
#include <QtTest>

#include "session/file_session_source.h"
#include "session/session_context.h"
#include "gui_test_support.h"
#include "models/navigator_filter.h"
#include "models/navigator_model.h"
#include "models/navigator_tree.h"
#include "session_fixture.h"
#include "panels/navigator.h"

using namespace dfi::ui;

namespace {

std::unique_ptr<SessionContext> makeContext() {
  return std::make_unique<SessionContext>(
      [](const QString& path) { return std::make_unique<FileSessionSource>(path.toStdString()); });
}

// "name | tau | steps | garbled" for every row, indented by depth: a readable picture of the tree.
QStringList dump(const QAbstractItemModel& model, const QModelIndex& parent = {}, int depth = 0, int maxDepth = 1) {
  QStringList lines;
  for (int r = 0; r < model.rowCount(parent); ++r) {
    QStringList cells;
    for (int c = 0; c < model.columnCount(parent); ++c) cells << model.index(r, c, parent).data().toString();
    lines << QString(depth * 2, QLatin1Char(' ')) + cells.join(QStringLiteral(" | "));
    if (depth < maxDepth) lines << dump(model, model.index(r, 0, parent), depth + 1, maxDepth);
  }
  return lines;
}

int countSteps(const QAbstractItemModel& model, const QModelIndex& parent = {}) {
  int n = 0;
  for (int r = 0; r < model.rowCount(parent); ++r) {
    const QModelIndex i = model.index(r, 0, parent);
    n += i.data(NavigatorModel::KindRole).toInt() == NavigatorModel::StepNode ? 1 : countSteps(model, i);
  }
  return n;
}

// The model loads on a worker; wait for it.
void reloadAndWait(NavigatorModel& model) {
  QSignalSpy loaded(&model, &NavigatorModel::loaded);
  model.reload();
  QVERIFY(loaded.count() == 1 || loaded.wait(10000));
}

// Opens `path` with `navigator` listening, waits for its tree, and shows it.
bool openAndShow(SessionContext& context, Navigator& navigator, const QString& path) {
  QSignalSpy loaded(navigator.model(), &NavigatorModel::loaded);
  if (!context.open(path) || !loaded.wait(10000)) return false;
  navigator.resize(500, 600);
  navigator.show();
  return QTest::qWaitForWindowExposed(&navigator);
}

// The selection a row of the tree as shown (filtered and sorted) stands for.
Selection selectionOf(Navigator& navigator, const QModelIndex& shown) {
  return navigator.model()->selectionAt(navigator.filter()->mapToSource(shown));
}

}  // namespace

class TestNavigator : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("fixture.dfi"));
    dfi::fixture::writeFixtureFile(path_.toStdString());
  }

  void modelShowsRunsPromptsAndAcceptance() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    NavigatorModel model(context.get());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    reloadAndWait(model);
    // Expected figures straight from the fixture's acceptance rule (B = 8: 7 draft slots).
    auto tau = [](int run, int prompt) {
      double sum = 0;
      for (int s = 0; s < 6; ++s) sum += dfi::fixture::fixtureAccepted(run, prompt, s, 7) + 1;
      return sum / 6;
    };
    const char* datasets[] = {"gsm8k", "gsm8k", "humaneval"};
    QStringList expected;
    for (int run = 0; run < 2; ++run) {
      const double runTau = (tau(run, 0) + tau(run, 1) + tau(run, 2)) / 3;
      expected << QStringLiteral("drafter-%1 | %2 | 18 | 1").arg(QChar('a' + run)).arg(runTau, 0, 'f', 2);
      for (int p = 0; p < 3; ++p)  // prompts by their first words, not "prompt 0"
        expected << QStringLiteral("  Question %1: what is %2 squared? \u00b7 %3 | %4 | 6 | %5")
                        .arg(p).arg(p + 2).arg(datasets[p]).arg(tau(run, p), 0, 'f', 2).arg(p == 2 ? 1 : 0);
    }
    QVERIFY(tau(1, 1) < tau(0, 1) - 0.5);  // the regression the filter test looks for
    QCOMPARE(dump(model), expected);
    const QModelIndex firstStep = model.index(0, 0, model.index(1, 0, model.index(0, 0)));
    QCOMPARE(firstStep.data().toString(), QStringLiteral("step 0 @ 11"));  // prompt 1 has 11 tokens
    QCOMPARE(model.index(0, NavigatorModel::AcceptanceColumn, firstStep.parent()).data().toInt(), 4);  // 3 drafts + 1
    const Selection selection = model.selectionAt(firstStep);
    QCOMPARE(selection.prompt, 1);
    QVERIFY(selection.step > 0);
    QCOMPARE(model.indexOf(selection), firstStep);

    // A step the first pass already counted (committed while the file was being opened) is
    // not added a second time when the follower reports it.
    model.appendSteps({*context->step(selection.step)});
    QCOMPARE(dump(model), expected);
  }

  // One tau convention on screen, named in the header: z-lab's by default (mean of the
  // responses' means), vLLM's (pooled over steps) when chosen in View; on prompts of unequal
  // length they differ: prompt 0 one step of length 8, prompt 1 three of length 2 give
  // z-lab (8 + 2) / 2 = 5 and vLLM (8 + 6) / 4 = 3.5.
  void runsShowTheChosenTauConvention() {
    const QString path = dir_.filePath(QStringLiteral("unequal.dfi"));
    {
      dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
      const auto run = writer.addRun({.name = "drafter-good/live/reference", .blockSize = 8, .topK = 0});
      std::int64_t anchor = 10;
      for (int p = 0; p < 2; ++p) {
        writer.addPrompt({.runId = run, .promptId = p, .text = "Question"});
        for (int s = 0; s < (p == 0 ? 1 : 3); ++s) {
          dfi::session::StepRecord step = dfi::fixture::fixtureStep(0, p, s, anchor, 7, 0);
          step.runId = run;
          step.acceptedCount = p == 0 ? 7 : 1;
          writer.addStep(step);
          anchor += step.acceptedCount + 1;
        }
      }
      writer.close();
    }
    auto context = makeContext();
    QVERIFY(context->open(path));
    Navigator navigator(context.get());
    NavigatorModel& model = *navigator.model();
    reloadAndWait(model);
    const QModelIndex run = model.index(0, NavigatorModel::AcceptanceColumn);
    QCOMPARE(model.headerData(NavigatorModel::AcceptanceColumn, Qt::Horizontal).toString(), QStringLiteral("\u03c4 (z-lab)"));
    QCOMPARE(run.data().toString(), QStringLiteral("5.00"));
    QVERIFY(model.headerData(NavigatorModel::AcceptanceColumn, Qt::Horizontal, Qt::ToolTipRole).toString().contains(
        QStringLiteral("z-lab")));
    context->setTauConvention(TauConvention::Vllm);  // what View > Tau Convention > vLLM does
    QCOMPARE(model.headerData(NavigatorModel::AcceptanceColumn, Qt::Horizontal).toString(), QStringLiteral("\u03c4 (vLLM)"));
    QCOMPARE(run.data().toString(), QStringLiteral("3.50"));
    // The same numbers as the analysis library's conventions (acceptance.h).
    const std::vector<dfi::analysis::ResponseAcceptance> responses = {{{8}, 0}, {{2, 2, 2}, 0}};
    QCOMPARE(model.index(0, 0).data(NavigatorModel::AcceptanceRole).toDouble(), dfi::analysis::tauVllm(responses));
    context->setTauConvention(TauConvention::Reference);
    QCOMPARE(model.index(0, 0).data(NavigatorModel::AcceptanceRole).toDouble(), dfi::analysis::tauReference(responses));
  }

  // The search matches run names and drafters as well as prompts, opens the runs but not every
  // prompt (that put every step in the view), and says when nothing matches.
  void searchMatchesRunsAndSaysWhenNothingDoes() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    Navigator navigator(context.get());
    reloadAndWait(*navigator.model());
    QAbstractItemModel* shown = navigator.tree()->model();
    navigator.searchField()->setText(QStringLiteral("drafter-b"));  // a run name
    QCOMPARE(shown->rowCount(), 1);
    QCOMPARE(shown->index(0, 0).data().toString(), QStringLiteral("drafter-b"));
    QCOMPARE(shown->rowCount(shown->index(0, 0)), 3);
    QVERIFY(navigator.tree()->isExpanded(shown->index(0, 0)));
    QVERIFY(!navigator.tree()->isExpanded(shown->index(0, 0, shown->index(0, 0))));
    QCOMPARE(navigator.matchesText(), QStringLiteral("3 prompt(s) match, 18 step(s); open a prompt to see its steps."
                                                     " Searching the steps' token text\u2026"));
    navigator.searchField()->setText(QStringLiteral("/models/drafter-a"));  // the drafter's path
    QCOMPARE(shown->rowCount(), 1);
    QCOMPARE(shown->index(0, 0).data().toString(), QStringLiteral("drafter-a"));
    navigator.searchField()->setText(QStringLiteral("no such words"));
    QCOMPARE(shown->rowCount(), 0);
    QSignalSpy searched(navigator.model(), &NavigatorModel::tokenTextMatches);
    navigator.searchTokenTextNow();  // nothing in the token text either
    QVERIFY(searched.wait(10000));
    QCOMPARE(shown->rowCount(), 0);
    QVERIFY2(navigator.matchesText().startsWith(QStringLiteral("Nothing matches \"no such words\"")),
             qPrintable(navigator.matchesText()));
    navigator.searchField()->clear();
    QVERIFY(navigator.matchesText().isEmpty());
  }

  // A followed step that arrives while the worker is still loading is applied after the load,
  // once (not lost in the reset, not counted twice).
  void stepsReportedDuringTheLoadAreKept() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    NavigatorModel model(context.get());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy loaded(&model, &NavigatorModel::loaded);
    model.reload();
    QVERIFY(model.isLoading());
    const auto runs = context->runs();
    dfi::session::StepRecord late = *context->step(context->steps(runs[0].runId, 0).back().stepId);
    late.stepId = 1'000'000;  // newer than anything in the file
    late.stepIndex = 6;
    model.appendSteps({late});
    QVERIFY(loaded.wait(10000));
    QCOMPARE(model.rowCount(model.index(0, 0, model.index(0, 0))), 7);
    QCOMPARE(model.index(0, NavigatorModel::StepsColumn).data().toInt(), 19);
  }

  void filtersNarrowTheTree() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    NavigatorModel model(context.get());
    reloadAndWait(model);
    NavigatorFilter filter;
    QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    filter.setNavigatorModel(&model);
    QCOMPARE(countSteps(filter), 36);

    filter.setMaxAcceptance(2.0);  // steps that accepted no draft
    int expected = 0;
    for (int run = 0; run < 2; ++run)
      for (int p = 0; p < 3; ++p)
        for (int s = 0; s < 6; ++s) expected += dfi::fixture::fixtureAccepted(run, p, s, 7) == 0;
    QCOMPARE(countSteps(filter), expected);
    filter.setMaxAcceptance(std::nullopt);

    filter.setGarbleDetectors(dfi::analysis::kGarbleRepeatedToken);
    QCOMPARE(countSteps(filter), 2);  // prompt 2, step 1, in both runs
    filter.setGarbleDetectors(dfi::analysis::kGarbleMaskToken);
    QCOMPARE(filter.rowCount(), 0);
    filter.setGarbleDetectors(0);

    const auto runs = model.runNames();
    filter.setRegression(std::pair{runs[0].first, runs[1].first}, 0.5);
    QCOMPARE(filter.rowCount(), 1);  // only drafter-b
    QCOMPARE(filter.index(0, 0).data().toString(), QStringLiteral("drafter-b"));
    QCOMPARE(filter.rowCount(filter.index(0, 0)), 1);
    QCOMPARE(filter.index(0, 0, filter.index(0, 0)).data().toString(), QStringLiteral("Question 1: what is 3 squared? \u00b7 gsm8k"));
    QCOMPARE(countSteps(filter), 6);
    filter.setRegression(std::nullopt, 0);

    filter.setSearchText(QStringLiteral("humaneval"));
    QCOMPARE(countSteps(filter), 12);
    filter.setSearchText(QStringLiteral("no such prompt"));
    QCOMPARE(filter.rowCount(), 0);
  }

  // Garble is counted on what the drafter proposes (the accepted slots and the first mismatch),
  // not in the unreached tail; the filter picks one detector and one run. Steps of run "good":
  //  0: repeated-token in slots 5-7, accepted 2: tail only (the old flag marked this step);
  //  1: repeated-token in slots 1-3, accepted 2: slot 1 accepted and slot 2 the first mismatch;
  //  2: anchor-echo at slot 0, accepted 0 (the first mismatch);
  //  3: DDTree, the tree accepted 5 but the chain mismatches at slot 0: its repeated-token at
  //     slots 2-4 lies in the chain's unreached tail.
  // Run "early": every step repeated-token from slot 0 with nothing accepted.
  void garbleCountsWhatTheDrafterProposesAndFiltersByDetectorAndRun() {
    namespace A = dfi::analysis;
    const QString path = dir_.filePath(QStringLiteral("garble.dfi"));
    dfi::session::RunId good = 0, early = 0;
    {
      dfi::session::Writer writer(path.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
      writer.addTokenStrings(dfi::fixture::fixtureTokenStrings());
      good = writer.addRun({.name = "drafter-good/live/reference", .blockSize = 9, .topK = 0});
      early = writer.addRun({.name = "drafter-early/live/reference", .blockSize = 9, .topK = 0});
      for (auto run : {good, early}) {
        writer.addPrompt({.runId = run, .promptId = 0, .text = "<|im_start|>user\nwrite fizzbuzz<|im_end|>\n"});
        for (int s = 0; s < 4; ++s) {
          dfi::session::StepRecord step = dfi::fixture::fixtureStep(0, 0, s, 10 + 10 * s, 8, 0);
          step.runId = run;
          std::vector<std::uint8_t> flags(8, 0);
          auto mark = [&](int from, int to, std::uint8_t flag) {
            for (int i = from; i <= to; ++i) flags[static_cast<std::size_t>(i)] |= flag;
          };
          if (run == early) {
            step.acceptedCount = 0;
            mark(0, 7, A::kGarbleRepeatedToken);
          } else if (s == 0) {
            step.acceptedCount = 2;
            mark(5, 7, A::kGarbleRepeatedToken);
          } else if (s == 1) {
            step.acceptedCount = 2;
            mark(1, 3, A::kGarbleRepeatedToken);
          } else if (s == 2) {
            step.acceptedCount = 0;
            mark(0, 0, A::kGarbleAnchorEcho);
          } else {
            step.mode = dfi::session::EvaluationMode::DDTree;
            step.acceptedCount = 5;
            step.draftTokens[0] = (step.targetTokens[0] + 1) % 39;  // the chain's first mismatch
            mark(2, 4, A::kGarbleRepeatedToken);
          }
          // Accepted drafts equal the target, as the writer's checks want.
          if (step.mode != dfi::session::EvaluationMode::DDTree)
            for (int i = 0; i < 8; ++i)
              step.draftTokens[static_cast<std::size_t>(i)] =
                  i < step.acceptedCount ? step.targetTokens[static_cast<std::size_t>(i)]
                                         : (step.targetTokens[static_cast<std::size_t>(i)] + 1) % 39;
          step.bonusToken = step.targetTokens[static_cast<std::size_t>(std::min(step.acceptedCount, 7))];
          step.garbleFlags = flags;
          writer.addStep(step);
        }
      }
      writer.close();
    }
    auto context = makeContext();
    QVERIFY(context->open(path));
    Navigator navigator(context.get());
    reloadAndWait(*navigator.model());
    NavigatorModel& model = *navigator.model();
    const QModelIndex goodRun = model.index(0, NavigatorModel::GarbledColumn);
    const QModelIndex earlyRun = model.index(1, NavigatorModel::GarbledColumn);
    QCOMPARE(goodRun.data().toInt(), 2);  // steps 1 and 2; step 0 and the DDTree step only in the tail
    QCOMPARE(earlyRun.data().toInt(), 4);
    const QString tip = goodRun.data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("repeated-token: 1 in what it proposes, 2 more in the unreached tail only")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("anchor-echo: 1 in what it proposes, 0 more")), qPrintable(tip));
    const QModelIndex prompt = model.index(0, 0, model.index(0, 0));
    QCOMPARE(prompt.data().toString(), QStringLiteral("write fizzbuzz"));  // its first words
    auto stepCell = [&](int s) { return model.index(s, NavigatorModel::GarbledColumn, prompt); };
    QVERIFY(stepCell(0).data().toString().isEmpty());
    QVERIFY(stepCell(0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("Unreached tail: repeated-token")));
    QCOMPARE(stepCell(1).data().toInt(), 2);  // slots 1 and 2 of 1..3
    QCOMPARE(stepCell(2).data().toInt(), 1);
    QVERIFY(stepCell(3).data().toString().isEmpty());  // the chain's tail, though within the tree's 5

    // The navigator's filters: a detector, then a run.
    QAbstractItemModel* shown = navigator.tree()->model();
    auto choose = [](QComboBox* box, const QString& text) {
      const int i = box->findText(text);
      QVERIFY2(i >= 0, qPrintable(text));
      box->setCurrentIndex(i);
    };
    choose(navigator.garbleChoice(), QStringLiteral("garbled: repeated-token"));
    QCOMPARE(shown->rowCount(), 2);
    QCOMPARE(countSteps(*shown), 1 + 4);  // good's step 1, every step of early
    choose(navigator.runChoice(), QStringLiteral("drafter-good/live/reference"));
    QCOMPARE(shown->rowCount(), 1);
    QCOMPARE(countSteps(*shown), 1);
    choose(navigator.garbleChoice(), QStringLiteral("garbled: anchor-echo"));
    QCOMPARE(countSteps(*shown), 1);
    QCOMPARE(shown->index(0, 0, shown->index(0, 0, shown->index(0, 0))).data().toString(), QStringLiteral("step 2 @ 30"));
    choose(navigator.garbleChoice(), QStringLiteral("garbled: mask-token"));
    QCOMPARE(shown->rowCount(), 0);
    // Which filters hide everything is said in words, with a link that clears them.
    QCOMPARE(navigator.matchesText(),
             QStringLiteral("Nothing matches these filters: garbled: mask-token, run drafter-good/live/reference."));
    QVERIFY(navigator.findChild<QLabel*>(QStringLiteral("filterMatches"))->text().contains(QStringLiteral("href")));
    choose(navigator.garbleChoice(), QStringLiteral("garbled: any detector"));
    QCOMPARE(countSteps(*shown), 2);
    navigator.clearFilters();
    QCOMPARE(navigator.garbleChoice()->currentIndex(), 0);
    QCOMPARE(navigator.runChoice()->currentIndex(), 0);
    QVERIFY(navigator.matchesText().isEmpty());
    QVERIFY(shown->rowCount() > 1);
  }

  // Sorting while a filter is on moves only the persistent indexes that exist (the runs open,
  // the current row): the old proxy opened every matching prompt and froze on the header click.
  void sortingAFilteredTreeKeepsWhatIsOpenAndSelected() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    Navigator navigator(context.get());
    reloadAndWait(*navigator.model());
    QAbstractItemModelTester tester(navigator.filter(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QTreeView* tree = navigator.tree();
    navigator.resize(500, 600);
    navigator.show();
    QVERIFY(QTest::qWaitForWindowExposed(&navigator));
    for (QCheckBox* box : navigator.findChildren<QCheckBox*>())
      if (box->text() == QStringLiteral("acceptance below")) box->setChecked(true);  // below 3
    QAbstractItemModel* shown = tree->model();
    QVERIFY(shown->rowCount() > 0);
    QVERIFY(tree->isExpanded(shown->index(0, 0)));
    const QModelIndex firstPrompt = shown->index(0, 0, shown->index(0, 0));
    QVERIFY(!tree->isExpanded(firstPrompt));
    tree->expand(firstPrompt);
    const QModelIndex step = shown->index(0, 0, firstPrompt);
    tree->setCurrentIndex(step);
    const Selection selected = context->selection();
    QVERIFY(selected.step > 0);

    // A header click: acceptance, descending; every level in that order, the same rows shown.
    const int before = countSteps(*shown);
    tree->header()->setSortIndicator(NavigatorModel::AcceptanceColumn, Qt::DescendingOrder);
    QCOMPARE(countSteps(*shown), before);
    for (int r = 0; r < shown->rowCount(); ++r) {
      const QModelIndex run = shown->index(r, 0);
      QVERIFY(tree->isExpanded(run));
      double last = 1e9;
      for (int p = 0; p < shown->rowCount(run); ++p) {
        const double tau = shown->index(p, 0, run).data(NavigatorModel::AcceptanceRole).toDouble();
        QVERIFY(tau <= last);
        last = tau;
      }
    }
    QCOMPARE(selectionOf(navigator, tree->currentIndex()), selected);
    QVERIFY(tree->isExpanded(tree->currentIndex().parent()));  // the prompt opened by hand stays open
    QCOMPARE(context->selection(), selected);
  }

  // The search looks into the steps' decoded draft and target text (on the worker).
  void searchFindsTokenText() {
    auto context = makeContext();
    QVERIFY(context->open(path_));
    Navigator navigator(context.get());
    reloadAndWait(*navigator.model());
    QAbstractItemModel* shown = navigator.tree()->model();
    // Token 17 decodes to "t17": which steps draft it or the target says it, counted here.
    int expected = 0;
    for (const auto& run : context->runs())
      for (int p = 0; p < 3; ++p)
        for (const auto& step : context->steps(run.runId, p)) {
          const auto has = [](const std::vector<dfi::session::TokenId>& t) { return std::ranges::find(t, 17) != t.end(); };
          expected += has(step.draftTokens) || has(step.targetTokens);
        }
    QVERIFY(expected > 0 && expected < 36);
    QSignalSpy found(navigator.model(), &NavigatorModel::tokenTextMatches);
    navigator.searchField()->setText(QStringLiteral("t17"));
    QCOMPARE(shown->rowCount(), 0);  // no prompt or run says "t17"
    QCOMPARE(navigator.matchesText(),
             QStringLiteral("No prompt, run or drafter matches \"t17\"; searching the steps' token text\u2026"));
    navigator.searchTokenTextNow();
    QVERIFY(found.wait(10000));
    QCOMPARE(countSteps(*shown), expected);
    QVERIFY2(navigator.matchesText().contains(QStringLiteral("step(s)")), qPrintable(navigator.matchesText()));
    QVERIFY(!navigator.matchesText().contains(QStringLiteral("earching")));
    navigator.searchField()->setText(QStringLiteral("t17 w"));  // across two tokens: "t17" " w.."
    navigator.searchTokenTextNow();
    QVERIFY(found.wait(10000));
    navigator.searchField()->setText(QStringLiteral("zz-no-token"));
    navigator.searchTokenTextNow();
    QVERIFY(found.wait(10000));
    QCOMPARE(shown->rowCount(), 0);
    QVERIFY2(navigator.matchesText().startsWith(QStringLiteral("Nothing matches \"zz-no-token\"")), qPrintable(navigator.matchesText()));
    QVERIFY(navigator.matchesText().contains(QStringLiteral("draft and target text")));
  }

  void promptsAreNamedByTheirFirstWords() {
    QCOMPARE(promptFirstWords(QStringLiteral("<|im_start|>user\ndef fizzbuzz(n):<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")),
             QStringLiteral("def fizzbuzz(n):"));
    QCOMPARE(promptFirstWords(QStringLiteral("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge"
                                             "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
                                             "<|start_header_id|>assistant<|end_header_id|>\n\n")),
             QStringLiteral("What is 2+2?"));
    QCOMPARE(promptFirstWords(QStringLiteral("<|start|>user<|message|>Explain  the\nmask<|end|><|start|>assistant")),
             QStringLiteral("Explain the mask"));
    QCOMPARE(promptFirstWords(QStringLiteral("Write a long essay about the history of speculative decoding in detail"), 40),
             QStringLiteral("Write a long essay about the history of\u2026"));
    QCOMPARE(promptLabel(4, QString()), QStringLiteral("prompt 4"));
    QCOMPARE(promptLabel(4, QStringLiteral("<|im_start|>user\n<|im_end|>")), QStringLiteral("prompt 4"));
  }

  void importedRunsMarkTheirFirstDivergentStep() {
    // `dflash-eval import`: the imported run names its reference; each prompt's first step whose
    // acceptance leaves the reference's is marked, none where they agree or in the reference.
    auto withSteps = [](NavigatorRun& run, dfi::session::PromptId prompt, std::vector<int> lengths) {
      const int row = run.addPrompt(prompt, {}, {});
      for (std::size_t i = 0; i < lengths.size(); ++i)
        run.addStep(row, NavigatorStep{static_cast<dfi::session::StepId>(run.record.runId * 100 + prompt * 10 + i),
                                       static_cast<std::int32_t>(i), 0, lengths[i]});
    };
    std::vector<NavigatorRun> runs(2);
    runs[0].record.runId = 1;
    runs[1].record.runId = 2;
    runs[1].record.origin = "z-lab dflash 0.1.0 benchmark records: f.jsonl";
    runs[1].record.settingsJson = R"({"import": {"reference_run": 1, "step_order": "recorded"}})";
    withSteps(runs[0], 0, {3, 2, 4});
    withSteps(runs[1], 0, {3, 1, 1, 4});
    withSteps(runs[0], 1, {2, 2});
    withSteps(runs[1], 1, {2, 2});
    markFirstDivergentSteps(runs);
    QCOMPARE(runs[1].prompts[0].firstDivergentStep, std::optional<int>(1));
    QVERIFY(!runs[1].prompts[1].firstDivergentStep);
    QVERIFY(!runs[0].prompts[0].firstDivergentStep);
    // Per-request counts (vLLM, SGLang) have no step to point at.
    runs[1].prompts[0].firstDivergentStep.reset();
    runs[1].record.settingsJson = R"j({"import": {"reference_run": 1, "step_order": "not recorded (per-request counts)"}})j";
    markFirstDivergentSteps(runs);
    QVERIFY(!runs[1].prompts[0].firstDivergentStep);
  }

  void keyboardNavigationSelectsInTheContext() {
    auto context = makeContext();
    Navigator navigator(context.get());
    QVERIFY(openAndShow(*context, navigator, path_));
    QSignalSpy spy(context.get(), &SessionContext::selectionChanged);
    QTreeView* tree = navigator.tree();
    tree->setFocus();
    tree->setCurrentIndex(tree->model()->index(0, 0));
    QCOMPARE(context->selection().prompt, -1);  // a run
    QTest::keyClick(tree, Qt::Key_Right);  // expand
    QTest::keyClick(tree, Qt::Key_Down);   // prompt 0
    QCOMPARE(context->selection().prompt, 0);
    QTest::keyClick(tree, Qt::Key_Right);
    QTest::keyClick(tree, Qt::Key_Down);  // its first step
    QVERIFY(context->selection().step > 0);
    QCOMPARE(spy.count(), 3);

    // A selection made elsewhere is shown here.
    const Selection other{context->selection().run, 2, 0};
    context->select(other);
    QCOMPARE(selectionOf(navigator, tree->currentIndex()), other);

    QTest::keySequence(&navigator, QKeySequence::Find);
    QVERIFY(navigator.searchField()->hasFocus());
    test::saveScreenshot(&navigator, QStringLiteral("navigator"));
  }

  // Following selections made elsewhere opens each response in turn and closes the one it
  // opened before (a trail of open responses made every later change lay out thousands of
  // rows); a response the user opened stays open.
  void followingASelectionClosesOnlyWhatItOpened() {
    auto context = makeContext();
    Navigator navigator(context.get());
    QVERIFY(openAndShow(*context, navigator, path_));
    QTreeView* tree = navigator.tree();
    QAbstractItemModel* shown = tree->model();
    const QModelIndex run = shown->index(0, 0);
    QVERIFY(shown->rowCount(run) >= 3);
    const dfi::session::RunId runId = selectionOf(navigator, run).run;
    auto response = [&](int prompt) { return shown->index(prompt, 0, run); };
    auto firstStepOf = [&](int prompt) {
      return selectionOf(navigator, shown->index(0, 0, response(prompt)));
    };
    tree->expand(response(0));  // opened by hand
    for (int prompt : {1, 2}) {
      context->select(firstStepOf(prompt));
      QCOMPARE(selectionOf(navigator, tree->currentIndex()).prompt, prompt);
      QCOMPARE(context->selection().run, runId);
    }
    QVERIFY(tree->isExpanded(response(0)));
    QVERIFY(!tree->isExpanded(response(1)));
    QVERIFY(tree->isExpanded(response(2)));
    context->select(firstStepOf(0));  // into the one opened by hand: the last opened closes
    QVERIFY(tree->isExpanded(response(0)));
    QVERIFY(!tree->isExpanded(response(2)));
  }

  void followsAFileBeingWritten() {
    const QString live = dir_.filePath(QStringLiteral("live.dfi"));
    dfi::session::Writer writer(live.toStdString(), {.mode = dfi::session::OpenMode::Overwrite});
    const auto runs = dfi::fixture::writeFixture(writer, {.prompts = 1, .stepsPerPrompt = 2});
    auto context = makeContext();
    QVERIFY(context->open(live));
    NavigatorModel model(context.get());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    reloadAndWait(model);
    QCOMPARE(countSteps(model), 4);
    // The filter places appended rows with one relayout (sorted by acceptance, descending here).
    NavigatorFilter filter;
    QAbstractItemModelTester filterTester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    filter.setNavigatorModel(&model);
    filter.sort(NavigatorModel::AcceptanceColumn, Qt::DescendingOrder);
    QCOMPARE(countSteps(filter), 4);
    struct Forward : SessionViewer {
      NavigatorModel* model;
      void onStepsAppended(const std::vector<dfi::session::StepRecord>& steps) override { model->appendSteps(steps); }
    } forward;
    forward.model = &model;
    context->addViewer(&forward);
    QSignalSpy appended(context.get(), &SessionContext::stepsAppended);

    // A new prompt with one step, then a commit.
    dfi::session::PromptRecord prompt;
    prompt.runId = runs[0];
    prompt.promptId = 7;
    prompt.dataset = "live";
    prompt.promptTokens = dfi::fixture::fixturePromptTokens(0);
    writer.addPrompt(prompt);
    dfi::session::StepRecord step = dfi::fixture::fixtureStep(0, 7, 0, 10, 7, 4);
    step.runId = runs[0];
    writer.addStep(step);
    writer.flush();
    QTRY_VERIFY_WITH_TIMEOUT(appended.count() > 0, 5000);  // the watcher or the poll timer
    QCOMPARE(countSteps(model), 5);
    QCOMPARE(countSteps(filter), 5);
    QCOMPARE(filter.mapToSource(filter.mapFromSource(model.index(1, 0, model.index(0, 0)))), model.index(1, 0, model.index(0, 0)));
    QCOMPARE(model.rowCount(model.index(0, 0)), 2);
    QCOMPARE(model.index(1, 0, model.index(0, 0)).data().toString(), QStringLiteral("prompt 7 \u00b7 live"));  // no text
    context->removeViewer(&forward);
    writer.close();
  }

  void badFilesAreReportedNotThrown() {
    auto context = makeContext();
    QSignalSpy errors(context.get(), &SessionContext::errorOccurred);
    const QString junk = dir_.filePath(QStringLiteral("junk.dfi"));
    QFile file(junk);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not an SQLite database, just text long enough to have a header.........");
    file.close();
    QVERIFY(!context->open(junk));
    QVERIFY(!context->open(dir_.filePath(QStringLiteral("missing.dfi"))));
    QCOMPARE(errors.count(), 2);
    QVERIFY(!context->isOpen());
  }
};

QTEST_MAIN(TestNavigator)
#include "test_navigator.moc"
