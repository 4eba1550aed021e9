// The tree view: the panel following the selection and the budget slider on a session written
// with the Writer (the layout it draws: tests/core/analysis/test_tree_layout.cpp).
// Screenshot: <build>/screenshots/tree_view.png.

#include <QCheckBox>
#include <QtTest>

#include <cmath>

#include "context/file_session_source.h"
#include "context/session_context.h"
#include "gui_test_support.h"
#include "session_fixture.h"
#include "widgets/tree_canvas.h"
#include "windows/tree_view.h"

using namespace dfi;
using namespace dfi::ui;

class TestTreeView : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QString path_;
  session::StepId recordedStep_ = 0;

 private slots:
  void initTestCase() {
    test::isolateSettings();
    path_ = dir_.filePath(QStringLiteral("tree.dfi"));
    session::Writer writer(path_.toStdString(), {.mode = session::OpenMode::Overwrite});
    fixture::writeFixture(writer);
    // A verified tree for step 3: root, two children, one grandchild on the accepted path.
    recordedStep_ = 3;
    writer.addTree({.stepId = recordedStep_, .nodeTokens = {5, 6, 7, 8},
                    .nodeLogProbs = {0.0f, std::log(0.6f), std::log(0.3f), std::log(0.6f * 0.5f)},
                    .parents = {-1, 0, 0, 1}, .acceptedPath = {0, 1, 3}});
    writer.close();
  }

  void panelFollowsSelectionAndBudget() {
    SessionContext context([](const QString& p) { return std::make_unique<FileSessionSource>(p.toStdString()); });
    TreeView view(&context);
    view.resize(1000, 700);
    view.show();
    QVERIFY(context.open(path_));
    const auto steps = context.steps(1, 1);
    const session::StepRecord& step = steps.at(2);
    context.select({1, 1, step.stepId});
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t(view.budget() + 1));
    view.setBudget(256);
    QVERIFY2(view.headline().contains(QStringLiteral("accepts %1 draft").arg(step.acceptedCount + 1)),
             qPrintable(view.headline()));
    view.setBudget(5);
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{6});
    view.setBudget(256);

    // The accepted path is drawn in the accepted colour, the root in the anchor colour.
    const QImage picture = view.canvas()->grab().toImage();
    const int acceptedNode = view.canvas()->tree().acceptedPath.back();
    const QRect box = view.canvas()->nodeRect(acceptedNode);
    QVERIFY(test::similarColour(picture.pixelColor(box.left() + 5, box.center().y()), TreeCanvas::acceptedColour()));
    const QRect root = view.canvas()->nodeRect(0);
    QVERIFY(test::similarColour(picture.pixelColor(root.left() + 5, root.center().y()), TreeCanvas::rootColour()));
    QVERIFY(view.canvas()->nodeToolTip(acceptedNode).contains(QLatin1String("accepted")));
    const CsvTable nodes = view.exportData();  // one row per node, for a spreadsheet
    QCOMPARE(nodes.rows.size(), std::size_t{257});
    QCOMPARE(nodes.header.size(), 9);
    QCOMPARE(nodes.rows[static_cast<std::size_t>(acceptedNode)].back(), QStringLiteral("yes"));
    QCOMPARE(view.canvas()->nodeAt(box.center()), acceptedNode);
    test::saveScreenshot(&view, QStringLiteral("tree_view"));

    // A block with a recorded tree shows it; moving the budget rebuilds from the top-k.
    context.select({1, 0, recordedStep_});
    auto* recorded = view.findChild<QCheckBox*>();
    QVERIFY(recorded->isEnabled() && recorded->isChecked());
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{4});
    QCOMPARE(view.canvas()->tree().acceptedPath, (std::vector<int>{0, 1, 3}));
    view.setBudget(10);
    QVERIFY(!recorded->isChecked());
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{11});

    context.close();
    QCOMPARE(view.canvas()->tree().nodes.size(), std::size_t{0});
  }
};

QTEST_MAIN(TestTreeView)
#include "test_tree_view.moc"
