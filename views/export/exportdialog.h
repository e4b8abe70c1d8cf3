#pragma once

#include "core/bench/benchreport.h"
#include "core/plan/quantplan.h"
#include "views/export/exportrunner.h"

#include <QDialog>
#include <QElapsedTimer>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace spark {

class Checkpoint;

/// @brief File ▸ Export: output folder, shard size, backend, GPTQ from a capture, the target pairing and
/// benchmarks for the model card; runs the export and then verify in the background with progress and
/// Cancel, and shows the verification. A cancelled or failed export leaves nothing behind (core's
/// staging folder), so the dialog never deletes anything itself.
class ExportDialog : public QDialog
{
    Q_OBJECT

  public:
    /// @param plan copied: edits in the plan tab after opening do not change what this dialog exports.
    /// @param benchmarks the Benchmarks tab's report, offered for the model card when given.
    ExportDialog(std::shared_ptr<const Checkpoint> source, QuantPlan plan,
                 std::optional<BenchReport> benchmarks = std::nullopt, QWidget* parent = nullptr);
    ~ExportDialog() override;

    /// @brief `<source>-w4a16` (`-w8a16` for 8 bits) beside the source folder, with -2, -3… when that
    /// exists; in the home folder, named after the model, when the source is a Hugging Face cache snapshot
    /// or its folder cannot be written.
    static QString defaultOutput(const QString& sourceFolder,
                                 const QString& schemeTag = QStringLiteral("w4a16"));
    /// @brief The output-name tag of a plan: its one scheme in lower case ("w8a16", "nvfp4a16",
    /// "w4a16-g32"), or "mixed" when it uses several.
    static QString schemeTag(const QuantPlan& plan);
    /// @brief @p output with -2, -3… appended, the first that does not exist (what the dialog offers when
    /// the chosen folder is not empty).
    static QString nextFreeOutput(const QString& output);

    QString outputPath() const;
    void setOutputPath(const QString& path);
    bool isRunning() const;
    /// @brief The message shown under the form (validation or failure), or empty.
    QString message() const;
    /// @brief The outcome of the last export, if one finished.
    const std::optional<ExportOutcome>& lastOutcome() const { return m_outcome; }

    QLineEdit* outputEdit() const { return m_output; }
    QComboBox* shardSizeBox() const { return m_shardSize; }
    QComboBox* backendBox() const { return m_backend; }
    QLineEdit* modelNameEdit() const { return m_modelName; }
    QLineEdit* targetModelEdit() const { return m_targetModel; }
    QComboBox* targetPrecisionBox() const { return m_targetPrecision; }
    QLineEdit* licenseEdit() const { return m_license; }
    QCheckBox* attachBenchmarksBox() const { return m_attachBenchmarks; }
    /// GPTQ from captured hidden states (the integer-scheme modules' codes solved before the export).
    QCheckBox* gptqBox() const { return m_gptq; }
    QLineEdit* captureEdit() const { return m_capture; }
    /// The target model's checkpoint, for a draft that reads the target's embeddings or head.
    QLineEdit* gptqTargetEdit() const { return m_gptqTarget; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* progressLabel() const { return m_progressText; }
    QLabel* resultLabel() const { return m_result; }
    QListWidget* problemList() const { return m_problems; }
    QPushButton* exportButton() const { return m_exportButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }
    QPushButton* openFolderButton() const { return m_openFolder; }
    QPushButton* browseButton() const { return m_browse; }
    /// @brief The free folder name the message offers (its "Use …" link), or empty.
    QString suggestedOutput() const { return m_suggestion; }
    ExportRunner* runner() const { return m_runner; }

  public Q_SLOTS:
    /// @brief Validates the inputs and starts the export (the Export button). @return false when an input
    /// is invalid (shown in the dialog) or an export is running.
    bool startExport();
    /// @brief Stops the running export (nothing is left behind); closes the dialog when none runs.
    void reject() override;
    void openOutputFolder();

  Q_SIGNALS:
    void exportFinished(const spark::ExportOutcome& outcome);

  private:
    void browse();
    void browseCapture();
    void onProgress(int value, const QString& text);
    void onFinished(const ExportOutcome& outcome);
    void setRunning(bool running);
    void updateGptqWidgets(bool running);
    /// GPTQ is asked for, or a module's rounding chooses its scales on a capture (hessian).
    bool needsCapture() const;
    void showMessage(const QString& text, bool error);
    // Clears what the last attempt showed: result, problems, message and progress.
    void clearResult();
    QString validate();

    std::shared_ptr<const Checkpoint> m_source;
    QuantPlan m_plan;
    std::optional<BenchReport> m_benchmarks;
    std::optional<ExportOutcome> m_outcome;
    ExportRunner* m_runner;
    QElapsedTimer m_stageTimer;
    int m_stage = -1;

    QLineEdit* m_output;
    QComboBox* m_shardSize;
    QComboBox* m_backend;
    QLineEdit* m_modelName;
    QLineEdit* m_targetModel;
    QComboBox* m_targetPrecision;
    QLineEdit* m_license;
    QCheckBox* m_attachBenchmarks;
    QCheckBox* m_gptq;
    QLineEdit* m_capture;
    QPushButton* m_browseCapture;
    QLineEdit* m_gptqTarget;
    QPushButton* m_browseTarget;
    QProgressBar* m_progress;
    QLabel* m_progressText;
    QLabel* m_message;
    QLabel* m_result;
    QListWidget* m_problems;
    QPushButton* m_exportButton;
    QPushButton* m_cancelButton;
    QPushButton* m_openFolder;
    QPushButton* m_browse = nullptr;
    QString m_suggestion;
    QString m_messageText; ///< m_message's text without the link markup
};

} // namespace spark
