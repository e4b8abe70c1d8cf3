// The plan editor's controller and models: live preview, invalid regexes blocking export, toggling a
// module through the entries (with its fused partners), undo/redo, lint tooltips and the summary bar.
#include "core/demo/demodraft.h"
#include "core/plan/quantplan.h"
#include "testsupport.h"
#include "views/document/checkpointloader.h"
#include "views/document/document.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/plan/summarybar.h"
#include "views/shared/formatting.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensortablemodel.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <nlohmann/json.hpp>
#include <set>

using namespace spark;

class TestGuiPlan : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    Document* m_document = nullptr;
    PlanController* m_controller = nullptr;

    const PlannedModule* module(const QString& name) const
    {
        return m_controller->plan()->findModule(name.toStdString());
    }

    // A quantized Linear that vLLM fuses with others (gate/up): toggling it must move its partners too.
    QString fusedQuantizedModule() const
    {
        for (const auto& m : m_controller->plan()->modules) {
            if (m.isLinear() && m.decision == PlanDecision::Quantize && !m.fusedGroup.empty()) {
                return QString::fromStdString(m.name);
            }
        }
        return {};
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QString draft = m_dir.filePath(QStringLiteral("glm"));
        writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), draft.toStdString(), {});
        QString error;
        m_snapshot = CheckpointLoader::openNow(draft, &error);
        QVERIFY2(m_snapshot, qPrintable(error));
    }

    void init()
    {
        m_document = new Document(this);
        m_document->setSnapshot(m_snapshot);
        m_controller = new PlanController(m_document, this);
        QVERIFY(m_controller->plan());
    }

    void cleanup()
    {
        delete m_controller;
        delete m_document;
    }

    // Add puts an empty row to type in: no rule yet, so no error the moment it appears; a rule typed wrong
    // is named without a CLI flag.
    void emptyRuleRowIsNoRuleYet()
    {
        m_controller->addEntry(EntryKind::Scheme, QString());
        m_controller->addEntry(PlanList::Roundings, QString());
        m_controller->recomputeNow();
        QVERIFY(m_controller->plan()->errors.empty());
        QVERIFY(!m_controller->plan()->hasLint("invalid-scheme-rule"));
        QVERIFY(!m_controller->plan()->hasLint("invalid-rounding-rule"));
        m_controller->addEntry(EntryKind::Scheme, QStringLiteral("fc=W5"));
        m_controller->recomputeNow();
        QVERIFY(m_controller->plan()->hasLint("invalid-scheme-rule"));
        for (const auto& e : m_controller->plan()->errors) {
            QVERIFY2(e.find("--") == std::string::npos, e.c_str());
        }
    }

    void schemeRulesEditPreviewAndUndo()
    {
        // A scheme rule typed in the Plan tab: live match count, the modules follow, one undo step back.
        PlanTab tab(m_controller);
        const int index =
            m_controller->addEntry(EntryKind::Scheme, QStringLiteral("re:.*\\.down_proj$=W8A16"));
        QCOMPARE(index, 0);
        m_controller->recomputeNow();
        const auto plan = m_controller->plan();
        QVERIFY(plan->errors.empty());
        int down = 0;
        for (const auto& m : plan->modules) {
            if (m.isLinear() && m.name.ends_with("down_proj")) {
                QCOMPARE(m.scheme, findWeightScheme("W8A16"));
                ++down;
            }
        }
        QVERIFY(down > 0);
        PlanEntryListModel rules(m_controller, EntryKind::Scheme);
        QAbstractItemModelTester tester(&rules);
        QCOMPARE(rules.rowCount(), 1);
        QCOMPARE(rules.index(0, PlanEntryListModel::Matches).data().toInt(), down);
        QCOMPARE(plan->groups.size(), std::size_t{2});
        QVERIFY(tab.summaryBar()->sizeText().contains(QStringLiteral("W8A16")));
        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan()->groups.size(), std::size_t{1});
        // A rule naming no known scheme is an error that blocks export, with the scheme list in the text.
        m_controller->addEntry(EntryKind::Scheme, QStringLiteral("re:.*=W3A16"));
        m_controller->recomputeNow();
        QVERIFY(m_controller->plan()->hasLint("invalid-scheme-rule"));
        QVERIFY(!m_controller->exportablePlan());
    }

    void defaultSchemeFromThePlanTab()
    {
        PlanTab tab(m_controller);
        auto* box = tab.defaultSchemeBox();
        QVERIFY(box->findData(QStringLiteral("W8A16:channel")) >= 0);
        QCOMPARE(box->findData(QStringLiteral("NVFP4A16")), -1); // not a --bits/--group default
        m_controller->setDefaultScheme(QStringLiteral("W8A16:channel"));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan()->defaultScheme, findWeightScheme("W8A16:channel"));
        QCOMPARE(box->currentData().toString(), QStringLiteral("W8A16:channel"));
        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan()->defaultScheme, findWeightScheme("W4A16"));
    }

    void moduleSchemeChooserMovesTheFusedSet()
    {
        const QString fused = fusedQuantizedModule();
        QVERIFY(!fused.isEmpty());
        QString message;
        QVERIFY2(m_controller->setModuleScheme(fused, QStringLiteral("NVFP4A16"), &message),
                 qPrintable(message));
        QVERIFY(message.contains(QStringLiteral("partners")));
        m_controller->recomputeNow();
        const auto* chosen = module(fused);
        QCOMPARE(chosen->scheme, findWeightScheme("NVFP4A16"));
        for (const auto& m : m_controller->plan()->modules) {
            if (m.vllmName == chosen->vllmName) {
                QCOMPARE(m.scheme, chosen->scheme);
            }
        }
        // Choosing again replaces the module's rule instead of piling rules up; BF16 keeps it.
        QVERIFY(m_controller->setModuleScheme(fused, QStringLiteral("BF16"), &message));
        m_controller->recomputeNow();
        QCOMPARE(module(fused)->decision, PlanDecision::Keep);
        QCOMPARE(m_controller->edits().schemes.size(), 1);
        // DSpark q/k/v are read raw by vLLM: the chooser refuses and says why, and nothing changes.
        const auto before = m_controller->edits();
        for (const auto& m : m_controller->plan()->modules) {
            if (m.readsRawWeight && m.isLinear()) {
                QVERIFY(!m_controller->setModuleScheme(QString::fromStdString(m.name),
                                                       QStringLiteral("W8A16"), &message));
                QVERIFY(message.contains(QStringLiteral("cannot take")));
                break;
            }
        }
        QVERIFY(m_controller->edits() == before);
    }

    void copiedCommandReproducesThePlan()
    {
        // Edits of every kind: a toggled fused module, a user regex entry (draft layer 4 is vLLM's layer
        // 82 behind a 78-layer target), the target layer count and an 8-bit per-channel scheme.
        QString message;
        QVERIFY2(m_controller->toggleModule(fusedQuantizedModule(), &message), qPrintable(message));
        m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:.*layers\\.82\\.mlp\\.down_proj$"));
        m_controller->setTargetLayers(78);
        m_controller->setDefaultScheme(QStringLiteral("W8A16:channel"));
        m_controller->recomputeNow();
        const auto plan = m_controller->plan();
        QVERIFY(plan->errors.empty());

        PlanTab tab(m_controller);
        const QString command = tab.quantizeCommandText();
        QVERIFY2(command.startsWith(QStringLiteral("sparkulator-cli quantize ")), qPrintable(command));
        QVERIFY2(command.contains(QStringLiteral("glm-w8a16-channel ")),
                 qPrintable(command)); // the scheme's name
        // The copied text through a real shell, with a sparkulator-cli on PATH that runs `plan` on the
        // same source and options instead (nothing is written).
        const QString bin = m_dir.filePath(QStringLiteral("bin"));
        QVERIFY(QDir().mkpath(bin));
        QFile stand(bin + QStringLiteral("/sparkulator-cli"));
        QVERIFY(stand.open(QIODevice::WriteOnly));
        stand.write("#!/bin/sh\nsrc=$2\nshift 4\nexec \"$CLI\" plan \"$src\" \"$@\" --json\n");
        stand.close();
        QVERIFY(stand.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        QProcess shell;
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("CLI"), QStringLiteral(SPARK_CLI_PATH));
        environment.insert(QStringLiteral("PATH"),
                           bin + QLatin1Char(':') + environment.value(QStringLiteral("PATH")));
        shell.setProcessEnvironment(environment);
        shell.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), command});
        QVERIFY(shell.waitForFinished(60000));
        QVERIFY2(shell.exitCode() == 0, qPrintable(command + QStringLiteral("\n") +
                                                   QString::fromUtf8(shell.readAllStandardError())));
        const auto json = nlohmann::json::parse(shell.readAllStandardOutput().toStdString());
        QCOMPARE(json["scheme"]["bits"].get<int>(), 8);
        QCOMPARE(json["scheme"]["group_size"].get<int>(), -1);
        QCOMPARE(json["target_layers"].get<int>(), 78);
        std::set<std::string> cliQuantized;
        for (const auto& m : json["modules"]) {
            if (m["decision"] == "quantize") {
                cliQuantized.insert(m["name"].get<std::string>());
            }
        }
        std::set<std::string> guiQuantized;
        for (const auto& m : plan->modules) {
            if (m.decision == PlanDecision::Quantize) {
                guiQuantized.insert(m.name);
            }
        }
        QVERIFY(!guiQuantized.empty());
        QVERIFY(!guiQuantized.count("layers.4.mlp.down_proj"));
        QVERIFY(cliQuantized == guiQuantized);
    }

    void autoPresetPlansTheDraft()
    {
        const auto plan = m_controller->plan();
        QCOMPARE(QString::fromStdString(plan->preset), QStringLiteral("glm-dspark"));
        QVERIFY(plan->errors.empty());
        QVERIFY(plan->sizes.quantizedModules > 0);
        QVERIFY(m_controller->exportablePlan());
        // The Tensors tab's decision column follows the plan.
        const QString quantized = fusedQuantizedModule();
        QVERIFY(!quantized.isEmpty());
        const int row = m_snapshot->rowOf(QString::fromStdString(module(quantized)->weightTensor));
        QCOMPARE((*m_document->analysis())[static_cast<std::size_t>(row)].decision,
                 schemeText(*module(quantized)->scheme));
    }

    void modelsPassTheTester()
    {
        PlanEntryListModel targets(m_controller, EntryKind::Target);
        PlanEntryListModel ignore(m_controller, EntryKind::Ignore);
        PlanModuleModel modules;
        LintModel lint;
        QAbstractItemModelTester t1(&targets, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(&ignore, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(&modules, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t4(&lint, QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(m_controller, &PlanController::planChanged, &modules, [&] {
            modules.resetData(m_controller->plan());
            lint.resetData(m_controller->plan());
        });
        modules.resetData(m_controller->plan());
        lint.resetData(m_controller->plan());
        QVERIFY(modules.rowCount() > 0);
        QVERIFY(ignore.rowCount() > 0); // the preset's entries

        m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:.*\\.mlp\\.down_proj$"));
        m_controller->addEntry(EntryKind::Target, QStringLiteral("model.nothing"));
        m_controller->recomputeNow();
        m_controller->setEntry(EntryKind::Ignore, 0, QStringLiteral("re:.*\\.fc$"));
        m_controller->recomputeNow();
        m_controller->moveEntry(EntryKind::Target, 0, 1);
        m_controller->removeEntry(EntryKind::Target, 0);
        m_controller->recomputeNow();
        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        m_controller->setPreset(QStringLiteral("none"));
        m_controller->recomputeNow();
        QCOMPARE(modules.rowCount(), static_cast<int>(m_controller->plan()->modules.size()));
    }

    void entryPreviewCountsMatches()
    {
        PlanEntryListModel ignore(m_controller, EntryKind::Ignore);
        const int index =
            m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:.*\\.mlp\\.down_proj$"));
        m_controller->recomputeNow();
        const int row = ignore.rowOfUserEntry(index);
        QCOMPARE(ignore.index(row, PlanEntryListModel::Entry).data().toString(),
                 QStringLiteral("re:.*\\.mlp\\.down_proj$"));
        const QStringList matched =
            ignore.index(row, 0).data(PlanEntryListModel::MatchedModulesRole).toStringList();
        QVERIFY(!matched.isEmpty());
        QCOMPARE(ignore.index(row, PlanEntryListModel::Matches).data().toInt(), matched.size());
        for (const auto& m : matched) {
            QVERIFY2(m.endsWith(QStringLiteral("mlp.down_proj")), qPrintable(m));
            QCOMPARE(module(m)->decision, PlanDecision::Keep);
        }
        // Preset rows are read-only, the user's editable.
        QVERIFY(!(ignore.flags(ignore.index(0, 0)) & Qt::ItemIsEditable));
        QVERIFY(ignore.flags(ignore.index(row, 0)) & Qt::ItemIsEditable);
    }

    void unmatchedEntryWarns()
    {
        PlanEntryListModel targets(m_controller, EntryKind::Target);
        const int index = m_controller->addEntry(EntryKind::Target, QStringLiteral("layers.0.mlp.down_proj"));
        m_controller->recomputeNow();
        const int row = targets.rowOfUserEntry(index);
        QCOMPARE(targets.index(row, PlanEntryListModel::Matches).data().toInt(), 0);
        QVERIFY2(targets.index(row, PlanEntryListModel::Problem)
                     .data()
                     .toString()
                     .contains(QStringLiteral("matches nothing")),
                 qPrintable(targets.index(row, PlanEntryListModel::Problem).data().toString()));
        QVERIFY(m_controller->plan()->hasLint("target-unmatched"));
    }

    // A preset entry for a module this draft lacks is no problem of the user's; a preset written for another
    // architecture says so in the preset box and in the lint.
    void presetEntriesAndPresetsOfOtherArchitectures()
    {
        // The trained EAGLE-3 head has no embed_tokens, which its preset keeps BF16 where a head has one.
        QString error;
        const auto eagle3 = CheckpointLoader::openNow(
            QString::fromStdString((test::dataPath("trained") / "eagle3").string()), &error);
        QVERIFY2(eagle3, qPrintable(error));
        Document document;
        document.setSnapshot(eagle3);
        PlanController controller(&document);
        PlanEntryListModel ignore(&controller, EntryKind::Ignore);
        bool embedTokens = false;
        for (int row = 0; row < ignore.rowCount(); ++row) {
            if (ignore.index(row, PlanEntryListModel::Entry).data().toString() ==
                QStringLiteral("re:.*embed_tokens$")) {
                embedTokens = true;
                QCOMPARE(ignore.index(row, PlanEntryListModel::Matches).data().toInt(), 0);
                QCOMPARE(ignore.index(row, PlanEntryListModel::Problem).data().toString(),
                         QStringLiteral("not in this draft"));
                QVERIFY(ignore.index(row, PlanEntryListModel::Entry).data(Qt::DecorationRole).isNull());
            }
        }
        QVERIFY(embedTokens);
        QVERIFY(!controller.plan()->hasLint("preset-architecture"));

        PlanTab tab(&controller);
        QComboBox* presets = tab.findChild<QComboBox*>(QStringLiteral("presetBox"));
        QVERIFY(presets);
        controller.setPreset(QStringLiteral("glm-dspark-patched"));
        controller.recomputeNow();
        QVERIFY(controller.plan()->hasLint("preset-architecture"));
        QCOMPARE(presets->itemText(presets->findData(QStringLiteral("glm-dspark-patched"))),
                 QStringLiteral("glm-dspark-patched — not for this draft"));
        QCOMPARE(presets->itemText(presets->findData(QStringLiteral("eagle3-int8"))),
                 QStringLiteral("eagle3-int8"));
        QCOMPARE(presets->itemText(presets->findData(QStringLiteral("generic"))), QStringLiteral("generic"));
    }

    void invalidRegexBlocksExportAndUndoRestores()
    {
        PlanEntryListModel ignore(m_controller, EntryKind::Ignore);
        const PlanEdits before = m_controller->edits();
        const int index = m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:layers.(0"));
        // While the edit waits for the debounce, nothing may be exported from the old plan.
        QVERIFY(m_controller->isPending());
        QVERIFY(!m_controller->exportablePlan());
        QSignalSpy planned(m_controller, &PlanController::planChanged);
        QVERIFY(planned.wait(2000));
        QVERIFY(!m_controller->plan()->errors.empty());
        QVERIFY(!m_controller->exportablePlan());
        const QModelIndex cell = ignore.index(ignore.rowOfUserEntry(index), PlanEntryListModel::Problem);
        QVERIFY(cell.data(PlanEntryListModel::HasErrorRole).toBool());
        QVERIFY2(cell.data().toString().contains(QStringLiteral("position")),
                 qPrintable(cell.data().toString()));

        m_controller->undoStack()->undo();
        QCOMPARE(m_controller->edits(), before);
        QVERIFY(planned.wait(2000));
        QVERIFY(m_controller->exportablePlan());
        m_controller->undoStack()->redo();
        QCOMPARE(m_controller->edits().ignore, QStringList{QStringLiteral("re:layers.(0")});
    }

    // Ignore ▸ Add on a list longer than its table: the new row is scrolled into view and being edited,
    // so the regex is not typed blind.
    void addedEntryIsInViewAndEdited()
    {
        PlanTab tab(m_controller);
        tab.resize(1200, 700);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        for (int i = 0; i < 12; ++i) {
            m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:.*layers\\.%1\\.mlp$").arg(i));
        }
        m_controller->recomputeNow();
        PlanEntryEditor* editor = tab.rulesEditor();
        editor->setCurrentList(PlanList::Ignore);
        QTableView* view = editor->view();
        view->scrollToTop();
        editor->addEntry();
        // The in-place editor: a line edit open on the table's viewport.
        const auto openEditor = [view] {
            const auto edits = view->viewport()->findChildren<QLineEdit*>();
            return std::any_of(edits.begin(), edits.end(), [](QLineEdit* e) { return e->isVisible(); });
        };
        QTRY_VERIFY(openEditor());
        const QModelIndex current = view->currentIndex();
        QVERIFY(current.isValid());
        QCOMPARE(current.row(), view->model()->rowCount() - 1);
        QVERIFY(view->viewport()->rect().contains(view->visualRect(current)));
    }

    void typingMergesIntoOneUndoStep()
    {
        const int index = m_controller->addEntry(EntryKind::Ignore, QString());
        const int steps = m_controller->undoStack()->count();
        const QString key = QStringLiteral("session-1");
        for (const QString& text : {QStringLiteral("r"), QStringLiteral("re"), QStringLiteral("re:"),
                                    QStringLiteral("re:.*\\.fc$")}) {
            m_controller->setEntry(EntryKind::Ignore, index, text, key);
        }
        QCOMPARE(m_controller->undoStack()->count(), steps + 1);
        m_controller->undoStack()->undo();
        QCOMPARE(m_controller->edits().ignore, QStringList{QString()});
    }

    void moveReordersUserEntries()
    {
        m_controller->addEntry(EntryKind::Target, QStringLiteral("a"));
        m_controller->addEntry(EntryKind::Target, QStringLiteral("b"));
        QVERIFY(!m_controller->moveEntry(EntryKind::Target, 0, -1));
        QVERIFY(m_controller->moveEntry(EntryKind::Target, 0, 1));
        QCOMPARE(m_controller->edits().targets, (QStringList{QStringLiteral("b"), QStringLiteral("a")}));
        m_controller->undoStack()->undo();
        QCOMPARE(m_controller->edits().targets, (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
    }

    void toggleMovesFusedPartnersAndSizes()
    {
        const QString name = fusedQuantizedModule();
        QVERIFY(!name.isEmpty());
        const std::string group = module(name)->vllmName;
        const auto bytesAfter = m_controller->plan()->sizes.bytesAfter;
        QString message;
        QVERIFY2(m_controller->toggleModule(name, &message), qPrintable(message));
        QCOMPARE(module(name)->decision, PlanDecision::Keep);
        QVERIFY(m_controller->plan()->sizes.bytesAfter > bytesAfter);
        int partners = 0;
        for (const auto& m : m_controller->plan()->modules) {
            if (m.isLinear() && m.vllmName == group && QString::fromStdString(m.name) != name) {
                QCOMPARE(m.decision, PlanDecision::Keep);
                QVERIFY2(message.contains(QString::fromStdString(m.name)), qPrintable(message));
                ++partners;
            }
        }
        QVERIFY(partners > 0);
        const int row = m_snapshot->rowOf(QString::fromStdString(module(name)->weightTensor));
        QCOMPARE((*m_document->analysis())[static_cast<std::size_t>(row)].decision, QStringLiteral("keep"));

        // And back: the entry the toggle added is removed again.
        QVERIFY2(m_controller->toggleModule(name, &message), qPrintable(message));
        QCOMPARE(module(name)->decision, PlanDecision::Quantize);
        QVERIFY(m_controller->edits().ignore.isEmpty());
        QCOMPARE(m_controller->plan()->sizes.bytesAfter, bytesAfter);
    }

    void toggleRefusesWhatEntriesCannotChange()
    {
        // glm-dspark keeps q/k/v BF16 through a preset entry (vllm#51581): the user's entries cannot flip it.
        QString kept;
        for (const auto& m : m_controller->plan()->modules) {
            if (m.isLinear() && m.decision == PlanDecision::Keep) {
                kept = QString::fromStdString(m.name);
                break;
            }
        }
        QVERIFY(!kept.isEmpty());
        const PlanEdits before = m_controller->edits();
        QString message;
        QVERIFY(!m_controller->toggleModule(kept, &message));
        QVERIFY(!message.isEmpty());
        QCOMPARE(m_controller->edits(), before);
        QVERIFY(!m_controller->toggleModule(QStringLiteral("no.such.module"), &message));
    }

    // What a preset's ignore entry keeps cannot be ticked (only another preset changes it): its checkbox is
    // drawn disabled and its tooltip names the entry; what the user's own entries keep stays enabled.
    void presetKeptCheckboxesAreDisabled()
    {
        PlanModuleModel modules;
        modules.resetData(m_controller->plan());
        int presetKept = 0;
        for (const auto& entry : m_controller->plan()->entries) {
            if (entry.kind != EntryKind::Ignore || !entry.source.starts_with("preset")) {
                continue;
            }
            for (const auto& match : entry.matches) {
                const QModelIndex cell = modules.index(modules.rowOf(QString::fromStdString(match.module)),
                                                       PlanModuleModel::Decision);
                if (!module(QString::fromStdString(match.module))->isLinear()) {
                    continue;
                }
                QVERIFY(modules.flags(cell) & Qt::ItemIsUserCheckable);
                QVERIFY2(!(modules.flags(cell) & Qt::ItemIsEnabled), match.module.c_str());
                QVERIFY(cell.data(Qt::ToolTipRole)
                            .toString()
                            .contains(QStringLiteral("preset's ignore entry '%1'")
                                          .arg(QString::fromStdString(entry.entry))));
                ++presetKept;
            }
        }
        QVERIFY(presetKept > 0);
        const QString name = fusedQuantizedModule();
        QString message;
        QVERIFY2(m_controller->toggleModule(name, &message), qPrintable(message));
        m_controller->recomputeNow();
        modules.resetData(m_controller->plan());
        QCOMPARE(module(name)->decision, PlanDecision::Keep);
        QVERIFY(modules.flags(modules.index(modules.rowOf(name), PlanModuleModel::Decision)) &
                Qt::ItemIsEnabled);
    }

    // The Tensors tab greys the same checkboxes: it read the preset-kept q/k/v as toggleable.
    void presetKeptCheckboxesAreDisabledInTheTensorsTab()
    {
        const QStringList kPresetKept{QStringLiteral("self_attn.q_proj"), QStringLiteral("self_attn.k_proj"),
                                      QStringLiteral("self_attn.v_proj"), QStringLiteral("markov_head."),
                                      QStringLiteral("confidence_head.")};
        TensorTableModel tensors;
        tensors.resetData(m_document->snapshot(), m_document->analysis());
        int kept = 0;
        int free = 0;
        for (int row = 0; row < tensors.rowCount(); ++row) {
            const QModelIndex cell = tensors.index(row, TensorColumns::Decision);
            if (!(tensors.flags(cell) & Qt::ItemIsUserCheckable)) {
                continue;
            }
            const QString tensor = cell.data(TensorColumns::TensorNameRole).toString();
            // What the glm-dspark recipe keeps BF16 (its description): q/k/v, the Markov and confidence
            // heads.
            const bool presetKept = std::any_of(kPresetKept.begin(), kPresetKept.end(),
                                                [&](const QString& part) { return tensor.contains(part); });
            QVERIFY2(bool(tensors.flags(cell) & Qt::ItemIsEnabled) == !presetKept, qPrintable(tensor));
            (presetKept ? kept : free) += 1;
        }
        QVERIFY(kept > 0 && free > 0);
    }

    void moduleCheckboxAsksForToggle()
    {
        PlanModuleModel modules;
        modules.resetData(m_controller->plan());
        const QString name = fusedQuantizedModule();
        const QModelIndex cell = modules.index(modules.rowOf(name), PlanModuleModel::Decision);
        QCOMPARE(cell.data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QSignalSpy toggled(&modules, &PlanModuleModel::toggleRequested);
        QVERIFY(modules.setData(cell, Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(toggled.count(), 1);
        QCOMPARE(toggled.front().front().toString(), name);
        // Non-Linear modules have no checkbox.
        for (int row = 0; row < modules.rowCount(); ++row) {
            const auto& m = m_controller->plan()->modules[static_cast<std::size_t>(row)];
            QCOMPARE(
                bool(modules.flags(modules.index(row, PlanModuleModel::Decision)) & Qt::ItemIsUserCheckable),
                m.isLinear());
        }
    }

    void everyLintRuleIsExplained()
    {
        m_controller->addEntry(EntryKind::Ignore, QStringLiteral("re:(x"));
        m_controller->addEntry(EntryKind::Target, QStringLiteral("nothing"));
        m_controller->recomputeNow();
        LintModel lint;
        lint.resetData(m_controller->plan());
        QVERIFY(lint.rowCount() > 0);
        for (int row = 0; row < lint.rowCount(); ++row) {
            const QString id = lint.index(row, LintModel::Id).data().toString();
            QVERIFY2(!LintModel::ruleDescription(id).isEmpty(), qPrintable(id));
            QVERIFY(!lint.index(row, LintModel::Severity).data(Qt::DecorationRole).isNull());
        }
    }

    // Lint rows sort by severity whatever order the plan found them in: a one-layer EAGLE-3 head's
    // eagle3-shallow-int4 warning came below the plan's info rows.
    void lintSortsBySeverity()
    {
        const QString draft = m_dir.filePath(QStringLiteral("eagle3"));
        writeDemoDraft(describeDemoDraft("llama-eagle3", DemoScale::Tiny), draft.toStdString(), {});
        QString error;
        const auto snapshot = CheckpointLoader::openNow(draft, &error);
        QVERIFY2(snapshot, qPrintable(error));
        Document document;
        document.setSnapshot(snapshot);
        PlanController controller(&document);
        controller.addEntry(EntryKind::Target, QStringLiteral("nothing")); // a warning of its own
        controller.recomputeNow();
        QVERIFY(controller.plan()->hasLint("eagle3-shallow-int4"));
        PlanTab tab(&controller);
        LintModel* lint = tab.lintModel();
        QAbstractItemModelTester tester(lint, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(lint->rowCount(), static_cast<int>(controller.plan()->lint.size()));
        std::set<int> seen;
        int previous = static_cast<int>(LintSeverity::Error);
        int shallow = -1;
        for (int row = 0; row < lint->rowCount(); ++row) {
            const int severity = lint->index(row, LintModel::Severity).data(LintModel::SeverityRole).toInt();
            QVERIFY2(severity <= previous, qPrintable(lint->index(row, LintModel::Id).data().toString()));
            previous = severity;
            seen.insert(severity);
            if (lint->index(row, LintModel::Id).data().toString() == QStringLiteral("eagle3-shallow-int4")) {
                shallow = row;
                QCOMPARE(lint->index(row, LintModel::Severity).data().toString(), QStringLiteral("warning"));
            }
        }
        QVERIFY(shallow >= 0);
        QVERIFY(seen.contains(static_cast<int>(LintSeverity::Info))); // rows of both kinds to order
        QVERIFY(seen.contains(static_cast<int>(LintSeverity::Warning)));
    }

    // The GUI names its own fields: the target-layers field, and the lint asking for it names that field.
    void targetLayersNamesTheField()
    {
        PlanTab tab(m_controller);
        QVERIFY(m_controller->plan()->hasLint("target-layers-unknown"));
        for (const auto* label : tab.findChildren<QLabel*>()) {
            QVERIFY2(!label->text().contains(QStringLiteral("--target")), qPrintable(label->text()));
        }
        LintModel* lint = tab.lintModel();
        bool found = false;
        for (int row = 0; row < lint->rowCount(); ++row) {
            if (lint->index(row, LintModel::Id).data().toString() ==
                QStringLiteral("target-layers-unknown")) {
                const auto text = lint->index(row, LintModel::Message).data().toString();
                QVERIFY2(text.contains(QStringLiteral("the Target layers field")), qPrintable(text));
                found = true;
            }
        }
        QVERIFY(found);
    }

    void summaryShowsSizesAndPrediction()
    {
        SummaryBar bar;
        bar.setPlan(m_controller->plan());
        QVERIFY2(bar.sizeText().contains(QStringLiteral("→")), qPrintable(bar.sizeText()));
        QVERIFY(!bar.timingText().contains(QStringLiteral("speedup ×")));
        bar.drafterMsInput()->setValue(2.0);
        bar.cycleMsInput()->setValue(20.0);
        QVERIFY2(bar.timingText().contains(QStringLiteral("speedup ×")), qPrintable(bar.timingText()));
        const QString before = bar.sizeText();
        QString message;
        QVERIFY(m_controller->toggleModule(fusedQuantizedModule(), &message));
        bar.setPlan(m_controller->plan());
        QVERIFY(bar.sizeText() != before);
    }
};

QTEST_MAIN(TestGuiPlan)
#include "tst_gui_plan.moc"
