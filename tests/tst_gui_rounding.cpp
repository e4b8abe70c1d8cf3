// The rounding method in the Plan tab: the Rounding combo beside the default scheme (keyboard reachable,
// a summary per method), rounding rules in the rules editor's second tab (one module changed, the others
// not, a bad rule shown inline and blocking export), the modules table naming the method, plan files
// round-tripping both controls, and an export from the GUI writing the memoryless_mse config group.
#include "core/plan/configreader.h"
#include "core/plan/planfile.h"
#include "core/plan/quantplan.h"
#include "core/quant/roundingmethod.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/export/exportdialog.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/window/mainwindow.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>
#include <nlohmann/json.hpp>
#include <set>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

// A quantized Linear that no other module shares its vLLM layer with: a rule on its exact name changes it
// alone.
const PlannedModule* loneQuantizedModule(const QuantPlan& plan)
{
    for (const auto& m : plan.modules) {
        if (m.isLinear() && m.decision == PlanDecision::Quantize && m.fusedGroup.empty()) {
            return &m;
        }
    }
    return nullptr;
}

// The modules that are quantized with a method other than @p method.
QStringList roundedOtherwise(const QuantPlan& plan, const char* method)
{
    QStringList out;
    for (const auto* m : plan.quantizedModules()) {
        if (m->rounding != findRoundingMethod(method)) {
            out.append(QString::fromStdString(m->name + " (" + std::string(m->rounding->name) + ")"));
        }
    }
    return out;
}

QString decisionText(PlanTab* tab, const std::string& module)
{
    PlanModuleModel* modules = tab->moduleModel();
    return modules->index(modules->rowOf(QString::fromStdString(module)), PlanModuleModel::Decision)
        .data()
        .toString();
}

} // namespace

class TestGuiRounding : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QLocale::setDefault(QLocale::c());
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", u"glm"_s);
    }

    void comboChoosesTheDefaultRounding()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(u"plan"_s));
        PlanController* controller = window.planController();
        PlanTab* tab = window.planTab();
        QComboBox* box = tab->roundingBox();

        // Every method, in the registry's order, with its summary as the tooltip; rtn by default.
        QCOMPARE(box->count(), static_cast<int>(roundingMethods().size()));
        for (int i = 0; i < box->count(); ++i) {
            const auto& method = roundingMethods()[static_cast<std::size_t>(i)];
            QCOMPARE(box->itemData(i).toString().toStdString(), std::string(method.name));
            QCOMPARE(box->itemData(i, Qt::ToolTipRole).toString().toStdString(), std::string(method.summary));
        }
        QCOMPARE(box->currentData().toString(), u"rtn"_s);
        QVERIFY(box->toolTip().contains(box->currentData(Qt::ToolTipRole).toString()));
        QVERIFY(roundedOtherwise(*controller->plan(), "rtn").isEmpty());

        // Reached with Tab from the default scheme, as the line reads left to right.
        tab->presetBox()->setFocus();
        QTRY_COMPARE(QApplication::focusWidget(), tab->presetBox());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QTRY_COMPARE(QApplication::focusWidget(), tab->defaultSchemeBox());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QTRY_COMPARE(QApplication::focusWidget(), box);

        // Down arrow picks mse, as a user at the keyboard would; the plan follows after the debounce.
        QTest::keyClick(box, Qt::Key_Down);
        QCOMPARE(box->currentData().toString(), u"mse"_s);
        QCOMPARE(controller->edits().rounding, u"mse"_s);
        QCOMPARE(controller->planOptions().rounding, std::string("mse"));
        QTRY_VERIFY(!controller->isPending());
        auto plan = controller->plan();
        QVERIFY(!plan->quantizedModules().empty());
        QCOMPARE(plan->defaultRounding, findRoundingMethod("mse"));
        const QStringList others = roundedOtherwise(*plan, "mse");
        QVERIFY2(others.isEmpty(), qPrintable(others.join(u", "_s)));
        // The modules table shows the method beside the scheme; the combo's tooltip describes the method.
        const auto* lone = loneQuantizedModule(*plan);
        QVERIFY(lone);
        QCOMPARE(decisionText(tab, lone->name), u"W4A16 · mse"_s);
        QVERIFY(box->toolTip().contains(u"memoryless_mse"_s));

        // One undo step back to rtn, and the combo follows.
        controller->undoStack()->undo();
        controller->recomputeNow();
        QCOMPARE(box->currentData().toString(), u"rtn"_s);
        QVERIFY(roundedOtherwise(*controller->plan(), "rtn").isEmpty());
        QCOMPARE(decisionText(tab, lone->name), u"W4A16"_s);
    }

    void roundingRuleChangesOneModule()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(u"plan"_s));
        PlanController* controller = window.planController();
        PlanTab* tab = window.planTab();
        PlanEntryEditor* rules = tab->rulesEditor();
        rules->setCurrentList(PlanList::Schemes);
        const std::string lone = loneQuantizedModule(*controller->plan())->name;
        const QString rule =
            QString::fromStdString(controller->plan()->findModule(lone)->vllmName) + u"=range"_s;

        // The rounding rules sit behind the rules editor's last tab, after the scheme rules.
        QTabBar* tabs = rules->tabBar();
        QVERIFY(tabs);
        QCOMPARE(tabs->count(), 4);
        QCOMPARE(rules->currentList(), PlanList(PlanList::Schemes));
        QCOMPARE(rules->view()->objectName(), u"schemeEntries"_s);
        // Keyboard: the tabs come before the editor's buttons in the focus chain; arrows switch the list.
        tabs->setFocus();
        QTRY_COMPARE(QApplication::focusWidget(), tabs);
        QTest::keyClick(tabs, Qt::Key_Tab);
        QWidget* focused = QApplication::focusWidget();
        auto* next = qobject_cast<QToolButton*>(focused);
        QVERIFY2(next && next->parent() == rules, focused ? focused->metaObject()->className() : "no focus");
        QCOMPARE(next->text(), u"Add"_s);
        tabs->setFocus();
        QTest::keyClick(tabs, Qt::Key_Right);
        QCOMPARE(rules->currentList(), PlanList(PlanList::Roundings));
        QTableView* view = rules->view();
        QCOMPARE(view->objectName(), u"roundingEntries"_s);
        QVERIFY(view->isVisible());
        QVERIFY(!rules->view(PlanList::Schemes)->isVisible());
        PlanEntryListModel* model = rules->model();
        QAbstractItemModelTester tester(model);

        // Add opens an editor on the new rule; typing commits as it goes, as in the other lists.
        rules->addEntry();
        QCOMPARE(model->rowCount(), 1);
        auto* line = qobject_cast<QLineEdit*>(view->indexWidget(model->index(0, PlanEntryListModel::Entry)));
        QVERIFY(line);
        QTest::keyClicks(line, rule);
        QTest::keyClick(line, Qt::Key_Return);
        QTRY_VERIFY(!view->indexWidget(model->index(0, PlanEntryListModel::Entry)));
        QCOMPARE(controller->edits().roundings, QStringList{rule});
        QCOMPARE(controller->edits().schemes, QStringList{});
        QCOMPARE(controller->planOptions().roundings, std::vector<std::string>{rule.toStdString()});
        controller->recomputeNow();

        const auto plan = controller->plan();
        QVERIFY(plan->errors.empty());
        QCOMPARE(plan->findModule(lone)->rounding, findRoundingMethod("range"));
        for (const auto* m : plan->quantizedModules()) {
            if (m->name != lone) {
                QVERIFY2(m->rounding == &rtnRounding(), m->name.c_str());
            }
        }
        QCOMPARE(model->index(0, PlanEntryListModel::Matches).data().toInt(), 1);
        QVERIFY(model->index(0, PlanEntryListModel::Problem).data().toString().isEmpty());
        QCOMPARE(model->index(0, PlanEntryListModel::Source).data().toString(), u"yours"_s);
        QCOMPARE(tabs->tabText(3), u"Rounding (1)"_s);
        QCOMPARE(decisionText(tab, lone), u"W4A16 · range"_s);

        // A later rule wins; a rule naming no method is shown inline and blocks export.
        controller->addEntry(PlanList::Roundings, rule.section(u'=', 0, 0) + u"=mse"_s);
        controller->recomputeNow();
        QCOMPARE(controller->plan()->findModule(lone)->rounding, findRoundingMethod("mse"));
        controller->addEntry(PlanList::Roundings, u"re:.*=fast"_s);
        controller->recomputeNow();
        QVERIFY(controller->plan()->hasLint("invalid-rounding-rule"));
        QVERIFY(!controller->exportablePlan());
        QVERIFY(model->index(2, PlanEntryListModel::Entry).data(PlanEntryListModel::HasErrorRole).toBool());
        QVERIFY(
            model->index(2, PlanEntryListModel::Problem).data().toString().contains(u"rtn, mse, range"_s));

        // Remove and reorder act on the list shown.
        view->setCurrentIndex(model->index(2, PlanEntryListModel::Entry));
        rules->removeCurrent();
        view->setCurrentIndex(model->index(1, PlanEntryListModel::Entry));
        rules->moveCurrent(-1);
        QCOMPARE(controller->edits().roundings, (QStringList{rule.section(u'=', 0, 0) + u"=mse"_s, rule}));
        controller->recomputeNow();
        QCOMPARE(controller->plan()->findModule(lone)->rounding, findRoundingMethod("range"));
        QVERIFY(controller->edits().schemes.isEmpty());
    }

    void planFileRoundTripsTheControls()
    {
        const QString file = m_dir.filePath(u"rounding-plan.json"_s);
        QString rule;
        {
            MainWindow window(quiet());
            QVERIFY(openAndWait(window, m_draft));
            PlanController* controller = window.planController();
            rule = QString::fromStdString(loneQuantizedModule(*controller->plan())->vllmName) + u"=mse"_s;
            controller->setDefaultRounding(u"range"_s);
            controller->addEntry(PlanList::Roundings, rule);
            controller->recomputeNow();
            QVERIFY(window.savePlan(file));
        }
        // What the file holds, read as text.
        const auto json = nlohmann::json::parse(test::readFile(file.toStdString()));
        QCOMPARE(json.at("rounding").get<std::string>(), std::string("range"));
        QVERIFY2(json.at("roundings") == nlohmann::json::array({rule.toStdString()}), json.dump().c_str());

        // A fresh window shows them in the controls after File ▸ Open Plan.
        MainWindow other(quiet());
        QVERIFY(openAndWait(other, m_draft));
        PlanTab* tab = other.planTab();
        QCOMPARE(tab->roundingBox()->currentData().toString(), u"rtn"_s);
        QVERIFY(other.openPlan(file));
        QCOMPARE(tab->roundingBox()->currentData().toString(), u"range"_s);
        PlanEntryListModel* rules = tab->rulesEditor()->model(PlanList::Roundings);
        QCOMPARE(rules->rowCount(), 1);
        QCOMPARE(rules->index(0, PlanEntryListModel::Entry).data().toString(), rule);
        QCOMPARE(rules->index(0, PlanEntryListModel::Matches).data().toInt(), 1);
        QCOMPARE(tab->rulesEditor()->tabBar()->tabText(3), u"Rounding (1)"_s);
        QVERIFY(!other.isWindowModified());
        const auto plan = other.planController()->plan();
        QCOMPARE(plan->defaultRounding, findRoundingMethod("range"));
        QCOMPARE(plan->findModule(loneQuantizedModule(*plan)->name)->rounding, findRoundingMethod("mse"));

        // A file written by core with other values (as `sparkulator-cli plan --save` would) shows those.
        PlanOptions options;
        options.rounding = "mse";
        options.roundings = {"re:.*down_proj$=rtn", "re:.*\\.fc$=range"};
        const QString written = m_dir.filePath(u"core-plan.json"_s);
        writePlanFile(written.toStdString(), options);
        QVERIFY(other.openPlan(written));
        QCOMPARE(tab->roundingBox()->currentData().toString(), u"mse"_s);
        QCOMPARE(other.planController()->edits().roundings,
                 (QStringList{u"re:.*down_proj$=rtn"_s, u"re:.*\\.fc$=range"_s}));
        QCOMPARE(rules->rowCount(), 2);
        // Saving again writes what the controls show.
        const QString again = m_dir.filePath(u"again.json"_s);
        QVERIFY(other.savePlan(again));
        const auto savedJson = planFileJson(readPlanFile(again.toStdString()));
        QVERIFY2(savedJson == planFileJson(readPlanFile(written.toStdString())), savedJson.dump().c_str());
    }

    void exportWritesTheObserverGroup()
    {
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft, 60000));
        QVERIFY(window.showTab(u"plan"_s));
        PlanController* controller = window.planController();
        PlanTab* tab = window.planTab();
        // mse for every module through the combo, range for one through a rule.
        QComboBox* box = tab->roundingBox();
        const int mse = box->findData(u"mse"_s);
        QVERIFY(mse >= 0);
        QCOMPARE(box->currentIndex(), mse - 1);
        QTest::keyClick(box, Qt::Key_Down);
        QCOMPARE(box->currentIndex(), mse);
        const auto* lone = loneQuantizedModule(*controller->plan());
        const std::string loneName = lone->name;
        controller->addEntry(PlanList::Roundings, QString::fromStdString(lone->vllmName) + u"=range"_s);
        QTRY_VERIFY_WITH_TIMEOUT(window.exportAction()->isEnabled(), 10000);
        QCOMPARE(window.currentPlan()->defaultRounding, findRoundingMethod("mse"));

        window.exportAction()->trigger();
        auto* dialog = window.findChild<ExportDialog*>(u"exportDialog"_s);
        QVERIFY(dialog);
        const QString output = m_dir.filePath(u"glm-mse"_s);
        dialog->setOutputPath(output);
        QSignalSpy finished(dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog->startExport());
        QVERIFY(finished.wait(300000));
        const auto& outcome = dialog->lastOutcome();
        QVERIFY(outcome);
        QVERIFY2(outcome->status == ExportOutcome::Status::Succeeded, qPrintable(outcome->error));
        QVERIFY(outcome->verify);
        QVERIFY2(outcome->verify->ok(), outcome->verify->summary().c_str());
        dialog->close();

        // The config.json on disk: an mse group with llm-compressor's observer, a range group for the rule.
        const auto config =
            nlohmann::json::parse(test::readFile(QString(output + u"/config.json"_s).toStdString()));
        const auto& groups = config.at("quantization_config").at("config_groups");
        std::set<std::string> observers;
        bool rangeMarked = false;
        for (auto it = groups.begin(); it != groups.end(); ++it) {
            const nlohmann::json& weights = it.value().at("weights");
            observers.insert(weights.at("observer").get<std::string>());
            rangeMarked =
                rangeMarked || (weights.contains("observer_kwargs") &&
                                weights["observer_kwargs"].value("sparkulator_rounding", "") == "range");
        }
        QVERIFY2(observers.contains("memoryless_mse"), groups.dump().c_str());
        QVERIFY2(rangeMarked, groups.dump().c_str());
        // vLLM's selection gives the rule's module the range group and the others the mse one.
        const auto read = readQuantizationConfig(config);
        QVERIFY(read.problems.empty());
        for (const auto* m : window.currentPlan()->quantizedModules()) {
            const int g = selectConfigGroup(read.groups, m->vllmName, m->vllmClass, standardFusedMapping());
            QVERIFY2(g >= 0, m->name.c_str());
            const auto* method = read.groups[static_cast<std::size_t>(g)].rounding;
            QVERIFY2(method == findRoundingMethod(m->name == loneName ? "range" : "mse"), m->name.c_str());
        }
    }
};

QTEST_MAIN(TestGuiRounding)
#include "tst_gui_rounding.moc"
