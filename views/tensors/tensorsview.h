#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QModelIndex;
class QSplitter;
class QTreeView;

namespace spark {

class Document;
class TensorDetailPanel;
class TensorFilterProxyModel;
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
    /// @brief Makes @p name current (expanding and scrolling to it, clearing a filter that hides it).
    /// @return false when the document has no such tensor.
    bool selectTensor(const QString& name);

    /// @brief Shows only the tensors of @p modules (checkpoint module names, e.g. from a lint finding)
    /// through a regex filter and makes the first one current. @return false when none exists.
    bool selectModules(const QStringList& modules);
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

  Q_SIGNALS:
    /// The current tensor changed (empty when none). Later panels (lint, histograms) follow this.
    void currentTensorChanged(const QString& name);
    /// The decision checkbox of @p module was toggled in either model; the plan decides what changes.
    void decisionToggleRequested(const QString& module);
    /// A scheme was chosen for @p module in the Decision column ("BF16" keeps it).
    void schemeChangeRequested(const QString& module, const QString& scheme);
    void groupedChanged(bool grouped);

  private:
    void onSnapshotChanged();
    void onCurrentChanged(const QModelIndex& current);
    void applyFilter();
    void updateCount();
    void expandDefault();

    Document* m_document;
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
    bool m_columnsSized = false;
};

} // namespace spark
