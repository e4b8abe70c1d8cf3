#pragma once

#include "views/tensors/tensorrowresult.h"
#include "views/tensors/tensorselection.h"

#include <QWidget>
#include <array>
#include <memory>

class QCheckBox;
class QLabel;
class QLineEdit;
class QModelIndex;
class QSplitter;
class QTreeView;

namespace spark {

class Document;
struct SweepResult;
struct WeightScheme;
class TensorDetailPanel;
class TensorFilterProxyModel;
class TensorItemModel;
class TensorTableModel;
class TensorTreeModel;

/// @brief The "Tensors" tab: the document's tensors as a layer → module → tensor tree or a flat list,
/// a name filter (plain or regex), sorting by any column and a detail panel for the current tensor.
class TensorsView : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorsView(Document* document, QWidget* parent = nullptr);

    bool isGrouped() const;
    /// @brief The tensor of the current row, or empty (nothing or a group/module is current).
    QString currentTensor() const;
    /// @brief What the current row stands for: a tensor, a module, a group or nothing.
    TensorSelection selection() const { return m_selection; }
    /// @brief Makes @p name current (expanding and scrolling to it, clearing a filter that hides it).
    /// @return false when the document has no such tensor.
    bool selectTensor(const QString& name);

    /// @brief Shows only the tensors of @p modules (checkpoint module names, e.g. from a lint finding)
    /// through a regex filter and makes the first one current. @return false when none exists.
    bool selectModules(const QStringList& modules);
    /// @brief Makes the module or group row @p name current (grouped mode; expanding to it).
    /// @return false when there is no such row.
    bool selectNode(const QString& name);
    /// @brief Sets the filter as if typed. @return false for an invalid regex (shown inline).
    bool setFilter(const QString& text, bool isRegex);
    /// @brief The inline error shown for the filter, or empty.
    QString filterError() const;

    QByteArray saveState() const;
    bool restoreState(const QByteArray& state);

    QTreeView* treeView() const { return m_view; }
    TensorFilterProxyModel* proxyModel() const { return m_proxy; }
    TensorTableModel* flatModel() const { return m_flat; }
    TensorTreeModel* treeModel() const { return m_tree; }
    TensorDetailPanel* detailPanel() const { return m_detail; }

  public Q_SLOTS:
    /// @brief Switches between the grouped tree and the flat list, keeping the current tensor.
    void setGrouped(bool grouped);
    /// @brief Puts the keyboard focus into the filter box and selects its text (Ctrl+F).
    void focusFilter();
    /// @brief The colour legend of the plan's schemes (names in config-group order).
    void setSchemeLegend(const QStringList& schemes);
    QString schemeLegendText() const;
    /// @brief The scheme the Document's analysis was measured with (the toolbar's; null: not known). With
    /// it, the weight of a module the plan quantizes with another scheme shows that scheme's error (from
    /// the sweep) or "not measured: SCHEME" (plannedErrors()).
    void setAnalysisScheme(const spark::WeightScheme* scheme);
    /// @brief The Budget tab's sweep (null: none): the error of every legal scheme of every decision unit.
    void setSweep(std::shared_ptr<const spark::SweepResult> sweep);

  Q_SIGNALS:
    /// The current tensor changed (empty when none, or when a module or group row is current).
    void currentTensorChanged(const QString& name);
    /// The current row changed: a tensor, module or group, or nothing. The detail sections follow this.
    void selectionChanged(const spark::TensorSelection& selection);
    /// The decision checkbox of @p module was toggled in either model; the plan decides what changes.
    void decisionToggleRequested(const QString& module);
    /// A scheme was chosen for @p module in the Decision column ("BF16" keeps it).
    void schemeChangeRequested(const QString& module, const QString& scheme);
    void groupedChanged(bool grouped);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    /// The flat and the grouped model: both always hold the current snapshot and analysis.
    std::array<TensorItemModel*, 2> models() const;
    void onSnapshotChanged();
    /// Recomputes the analysis the models show (plannedErrors()) and announces @p rows and every row whose
    /// shown error changed.
    void refreshShownAnalysis(const QList<int>& rows);
    /// @p force: announce the selection even when it did not change (a new snapshot under the same name).
    void onCurrentChanged(const QModelIndex& current, bool force = false);
    TensorSelection selectionOf(const QModelIndex& current) const;
    /// Fits every column to its contents and gives Name what is left of the viewport (eliding in the
    /// middle), so Decision and Rel. error stay in view.
    void fitColumns();
    /// The width fitColumns() gives @p column.
    int fittedWidth(int column) const;
    /// Gives Name the viewport's spare width after a resize, keeping the other widths.
    void fitNameColumn();
    void applyFilter();
    void updateCount();
    void expandDefault();

    Document* m_document;
    const WeightScheme* m_analysisScheme = nullptr;
    std::shared_ptr<const SweepResult> m_sweep;
    std::shared_ptr<const AnalysisTable> m_shown; ///< what the models show: the Document's, corrected
    TensorTableModel* m_flat;
    TensorTreeModel* m_tree;
    TensorFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QCheckBox* m_regex;
    QCheckBox* m_grouped;
    QLabel* m_legend = nullptr;
    QLabel* m_count;
    QLabel* m_filterError;
    QSplitter* m_splitter;
    QTreeView* m_view;
    TensorDetailPanel* m_detail;
    QString m_currentTensor;
    TensorSelection m_selection;
};

} // namespace spark
