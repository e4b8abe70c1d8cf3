// Plan files in the desktop app: File ▸ Save Plan / Open Plan, the modified mark in the title,
// the save/discard/cancel prompt before unsaved edits are lost, a plan made for another draft, and the
// status-bar and open-error wording.
#include "core/demo/demodraft.h"
#include "core/plan/planfile.h"
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/document/document.h"
#include "views/plan/plancontroller.h"
#include "views/window/mainwindow.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>
#include <nlohmann/json.hpp>
#include <set>

using namespace spark;
using namespace spark::test;

class TestGuiPlanFile : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_glm;
    QString m_qwen;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // A user edit: one more ignore entry (an undoable step).
    static void editPlan(MainWindow& window, const QString& entry = QStringLiteral("re:.*markov.*"))
    {
        window.planController()->addEntry(EntryKind::Ignore, entry);
        window.planController()->recomputeNow();
    }

    static QString summaryText(MainWindow& window)
    {
        for (auto* label : window.statusBar()->findChildren<QLabel*>()) {
            if (label->text().contains(QStringLiteral("tensor"))) {
                return label->text();
            }
        }
        return {};
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_glm = path(QStringLiteral("glm"));
        writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), m_glm.toStdString(), {});
        m_qwen = path(QStringLiteral("qwen"));
        writeDemoDraft(describeDemoDraft("qwen3-dflash", DemoScale::Tiny), m_qwen.toStdString(), {});
        test::writeFile(path(QStringLiteral("bad/garbage.safetensors")).toStdString(),
                        test::safetensorsImage("{not json", 16));
    }

    void titleMarksUnsavedEdits()
    {
        MainWindow window(quiet());
        QVERIFY(window.windowTitle().contains(QStringLiteral("[*]")));
        QVERIFY(!window.savePlanAction()->isEnabled());
        QVERIFY(openAndWait(window, m_glm));
        QVERIFY(window.savePlanAction()->isEnabled());
        QVERIFY(window.openPlanAction()->isEnabled());
        QVERIFY(!window.isWindowModified());
        editPlan(window);
        QVERIFY(window.isWindowModified());
        window.planController()->undoStack()->undo();
        QVERIFY(!window.isWindowModified());
        window.planController()->undoStack()->redo();
        QVERIFY(window.isWindowModified());

        const QString file = path(QStringLiteral("title.json"));
        QVERIFY(window.savePlan(file));
        QVERIFY(!window.isWindowModified());
        QCOMPARE(window.planPath(), file);
        // Undo after a save is an unsaved change again.
        window.planController()->undoStack()->undo();
        QVERIFY(window.isWindowModified());
    }

    void saveAndOpenRoundTrip()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_glm));
        auto* controller = window.planController();
        editPlan(window);
        controller->addEntry(EntryKind::Scheme, QStringLiteral("re:.*down_proj=W8A16"));
        controller->setDefaultScheme(QStringLiteral("W4A16:g64"));
        controller->setTargetLayers(40);
        controller->recomputeNow();
        const PlanEdits saved = controller->edits();
        const QString file = path(QStringLiteral("roundtrip.json"));
        QVERIFY(window.savePlan(file));

        const auto json = nlohmann::json::parse(test::readFile(file.toStdString()));
        QVERIFY2((json.at("ignore")) == (nlohmann::json::array({"re:.*markov.*"})),
                 (json.at("ignore")).dump().c_str());
        QVERIFY2((json.at("schemes")) == (nlohmann::json::array({"re:.*down_proj=W8A16"})),
                 (json.at("schemes")).dump().c_str());
        QCOMPARE(json.at("default_scheme").get<std::string>(), std::string("W4A16:g64"));
        QCOMPARE(json.at("target_layers").get<int>(), 40);
        QCOMPARE(json.at("preset").get<std::string>(), std::string("auto"));
        QVERIFY2((planFileJson(readPlanFile(file.toStdString()))) ==
                     (planFileJson(controller->planOptions())),
                 (planFileJson(readPlanFile(file.toStdString()))).dump().c_str());

        // A fresh window on the same draft gets the same edits, unmodified, as one undoable step.
        MainWindow other(quiet());
        QVERIFY(openAndWait(other, m_glm));
        QVERIFY(other.openPlan(file));
        QCOMPARE(other.planController()->edits(), saved);
        QVERIFY(!other.isWindowModified());
        QCOMPARE(other.planPath(), file);
        QVERIFY(other.planController()->plan());
        QVERIFY(!other.planController()->plan()->hasLint("ignore-unmatched"));
        other.planController()->undoStack()->undo();
        QCOMPARE(other.planController()->edits(), PlanEdits{});
        QVERIFY(other.isWindowModified());
    }

    void menuActionsAskForAName()
    {
        const QString file = path(QStringLiteral("menu.json"));
        QList<bool> asked;
        MainWindowOptions options = quiet();
        options.planFileDialog = [&](bool save) {
            asked.append(save);
            return file;
        };
        MainWindow window(options);
        QVERIFY(openAndWait(window, m_glm));
        editPlan(window);
        window.savePlanAction()->trigger(); // no plan file yet: asks for a name
        QCOMPARE(asked, QList<bool>{true});
        QVERIFY(QFileInfo::exists(file));
        QVERIFY(!window.isWindowModified());
        editPlan(window, QStringLiteral("lm_head"));
        window.savePlanAction()->trigger(); // saves to the same file without asking
        QCOMPARE(asked.size(), 1);
        QCOMPARE(readPlanFile(file.toStdString()).ignore,
                 (std::vector<std::string>{"re:.*markov.*", "lm_head"}));
        window.planController()->undoStack()->undo();
        window.planController()->undoStack()->undo();
        window.openPlanAction()->trigger();
        QCOMPARE(asked, (QList<bool>{true, false}));
        QCOMPARE(window.planController()->edits().ignore,
                 (QStringList{QStringLiteral("re:.*markov.*"), QStringLiteral("lm_head")}));
        QVERIFY(!window.isWindowModified());
    }

    void openingAnotherDraftAsks()
    {
        UnsavedPlanChoice answer = UnsavedPlanChoice::Cancel;
        int prompts = 0;
        const QString file = path(QStringLiteral("prompt-save.json"));
        MainWindowOptions options = quiet();
        options.unsavedPlanPrompt = [&] {
            ++prompts;
            return answer;
        };
        options.planFileDialog = [&](bool) { return file; };
        MainWindow window(options);
        QVERIFY(openAndWait(window, m_glm));
        // Nothing edited: no question.
        QVERIFY(openAndWait(window, m_glm));
        QCOMPARE(prompts, 0);

        editPlan(window);
        const PlanEdits edited = window.planController()->edits();
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.open(m_qwen); // Cancel: nothing happens
        QCOMPARE(prompts, 1);
        QVERIFY(!loaded.wait(500));
        QCOMPARE(window.currentPath(), m_glm);
        QCOMPARE(window.planController()->edits(), edited);
        QVERIFY(window.isWindowModified());

        answer = UnsavedPlanChoice::Save; // Save: writes the plan file, then opens
        QVERIFY(openAndWait(window, m_qwen));
        QCOMPARE(prompts, 2);
        QCOMPARE(readPlanFile(file.toStdString()).ignore, std::vector<std::string>{"re:.*markov.*"});
        QCOMPARE(window.currentPath(), m_qwen);
        QVERIFY(!window.isWindowModified());
        QVERIFY(window.planPath().isEmpty()); // the file belongs to the other draft

        editPlan(window);
        answer = UnsavedPlanChoice::Discard; // Discard: opens, the edits are gone
        QVERIFY(openAndWait(window, m_glm));
        QCOMPARE(prompts, 3);
        QCOMPARE(window.planController()->edits(), PlanEdits{});
        QVERIFY(!window.isWindowModified());
    }

    void quittingAsks()
    {
        UnsavedPlanChoice answer = UnsavedPlanChoice::Cancel;
        int prompts = 0;
        MainWindowOptions options = quiet();
        options.unsavedPlanPrompt = [&] {
            ++prompts;
            return answer;
        };
        MainWindow window(options);
        window.show();
        QVERIFY(openAndWait(window, m_glm));
        editPlan(window);
        QVERIFY(!window.close());
        QCOMPARE(prompts, 1);
        QVERIFY(window.isVisible());
        answer = UnsavedPlanChoice::Discard;
        QVERIFY(window.close());
        QCOMPARE(prompts, 2);
        QVERIFY(!window.isVisible());
    }

    // Without a hook the window asks with a real Save/Discard/Cancel message box.
    void promptIsAMessageBox()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, m_glm));
        editPlan(window);
        QStringList buttons;
        bool found = false;
        QTimer::singleShot(0, &window, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box) {
                return;
            }
            found = box->objectName() == QStringLiteral("unsavedPlanDialog");
            for (auto* button : box->buttons()) {
                buttons.append(
                    box->standardButton(button) == QMessageBox::Save      ? QStringLiteral("save")
                    : box->standardButton(button) == QMessageBox::Discard ? QStringLiteral("discard")
                    : box->standardButton(button) == QMessageBox::Cancel  ? QStringLiteral("cancel")
                                                                          : QStringLiteral("other"));
            }
            box->button(QMessageBox::Cancel)->click();
        });
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.open(m_qwen);
        QVERIFY(found);
        buttons.sort();
        QCOMPARE(buttons,
                 (QStringList{QStringLiteral("cancel"), QStringLiteral("discard"), QStringLiteral("save")}));
        QVERIFY(!loaded.wait(300));
        QCOMPARE(window.currentPath(), m_glm);
        QVERIFY(window.isWindowModified());
    }

    // A plan file made for one draft applied to another: its entries that match nothing are reported.
    void planForAnotherDraftReportsUnmatched()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_qwen));
        auto plan = window.planController()->plan();
        QVERIFY(plan);
        std::set<std::string> qwenNames;
        for (const auto& m : plan->modules) {
            qwenNames.insert(m.vllmName);
        }
        QVERIFY(openAndWait(window, m_glm));
        plan = window.planController()->plan();
        QVERIFY(plan);
        // A quantized Linear module of this draft that the other draft does not have, by its exact vLLM name.
        QString markov;
        for (const auto& m : plan->modules) {
            if (m.decision == PlanDecision::Quantize && !qwenNames.contains(m.vllmName)) {
                markov = QString::fromStdString(m.vllmName);
                break;
            }
        }
        QVERIFY(!markov.isEmpty());
        editPlan(window, markov);
        QVERIFY(!window.planController()->plan()->hasLint("ignore-unmatched"));
        const QString file = path(QStringLiteral("glm-plan.json"));
        QVERIFY(window.savePlan(file));

        QVERIFY(openAndWait(window, m_qwen));
        QVERIFY(window.openPlan(file));
        plan = window.planController()->plan();
        QVERIFY(plan);
        QVERIFY(plan->hasLint("ignore-unmatched"));
        bool named = false;
        for (const auto& finding : plan->lint) {
            if (finding.id == "ignore-unmatched") {
                named = named || std::find(finding.modules.begin(), finding.modules.end(),
                                           markov.toStdString()) != finding.modules.end();
            }
        }
        QVERIFY(named);
        const QString message = window.statusBar()->currentMessage();
        QVERIFY2(message.contains(QStringLiteral("match nothing")) && message.contains(markov),
                 qPrintable(message));
    }

    void badPlanFileIsReported()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_glm));
        editPlan(window);
        const PlanEdits before = window.planController()->edits();
        const QString file = path(QStringLiteral("bad-plan.json"));
        test::writeFile(file.toStdString(), R"({"format": "sparkulator-plan", "version": 1, "targets": 5})");
        QSignalSpy failed(&window, &MainWindow::planFileFailed);
        QVERIFY(!window.openPlan(file));
        QCOMPARE(failed.size(), 1);
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.contains(file) && message.contains(QStringLiteral("field 'targets'")),
                 qPrintable(message));
        QCOMPARE(window.planController()->edits(), before);
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("field 'targets'")));

        // With dialogs on, a message box says it too.
        MainWindow shown(noSavedState());
        QVERIFY(openAndWait(shown, m_glm));
        QVERIFY(!shown.openPlan(file));
        auto* box = shown.findChild<QMessageBox*>(QStringLiteral("planFileErrorDialog"));
        QVERIFY(box);
        QVERIFY(box->informativeText().contains(QStringLiteral("field 'targets'")));
        box->accept();
    }

    // A long status message is not cut by the permanent summary.
    void statusMessageNotCutBySummary()
    {
        MainWindow window(quiet());
        window.resize(900, 600);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_glm));
        window.statusBar()->clearMessage();
        QLabel* summary = nullptr;
        for (auto* label : window.statusBar()->findChildren<QLabel*>()) {
            if (label->text().contains(QStringLiteral("tensor"))) {
                summary = label;
            }
        }
        QVERIFY(summary);
        QVERIFY(summary->isVisible());
        window.statusBar()->showMessage(QStringLiteral("short"));
        QVERIFY(summary->isVisible());
        // Longer than what the summary leaves, shorter than the whole bar.
        const QFontMetrics metrics = window.statusBar()->fontMetrics();
        const int target = window.width() - metrics.averageCharWidth() * 8 - summary->sizeHint().width() / 2;
        QString longMessage = QStringLiteral("Saved");
        while (metrics.horizontalAdvance(longMessage) < target) {
            longMessage += QStringLiteral(" word");
        }
        window.statusBar()->showMessage(longMessage);
        QVERIFY(!summary->isVisible());
        QVERIFY(window.statusBar()->fontMetrics().horizontalAdvance(longMessage) < window.width());
        window.statusBar()->clearMessage();
        QVERIFY(summary->isVisible());
        QVERIFY(!summaryText(window).isEmpty());
    }

    // Opening a file that is no safetensors file says so first.
    void garbageFileSaysNotSafetensors()
    {
        MainWindow window(quiet());
        QSignalSpy failed(&window, &MainWindow::openFailed);
        window.open(path(QStringLiteral("bad/garbage.safetensors")));
        QVERIFY(failed.wait(30000));
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.startsWith(QStringLiteral("Not a safetensors file: ")), qPrintable(message));
        QVERIFY(message.contains(QStringLiteral("garbage.safetensors")));
        // Missing paths keep their own wording.
        window.open(path(QStringLiteral("does-not-exist")));
        QVERIFY(failed.wait(30000));
        QVERIFY(!failed.at(1).at(1).toString().startsWith(QStringLiteral("Not a safetensors file")));
    }
};

QTEST_MAIN(TestGuiPlanFile)
#include "tst_gui_planfile.moc"
