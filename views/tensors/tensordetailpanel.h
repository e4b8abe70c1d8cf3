#pragma once

#include "views/tensors/tensorselection.h"

#include <QWidget>

class QFormLayout;
class QGroupBox;
class QLabel;
class QVBoxLayout;

namespace spark {

struct DocumentSnapshot;

/// @brief Shows what is selected in the Tensors tab: one tensor's metadata (file, offsets, dtype, shape,
/// sizes, module, group), or a module's or layer's summary (its tensors, sizes). Later stages add their own
/// sections below it (vLLM name, lint findings, histograms) through addSection() and follow the selection
/// themselves, so the panel stays free of plan and analysis code. With nothing selected it shows a centred
/// hint instead of empty sections.
class TensorDetailPanel : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorDetailPanel(QWidget* parent = nullptr);

    /// @brief Shows row @p row of @p snapshot.
    void showTensor(const DocumentSnapshot& snapshot, int row);
    /// @brief Shows @p selection of @p snapshot: a tensor, a module or a group (None: the hint).
    void showSelection(const DocumentSnapshot& snapshot, const TensorSelection& selection);
    /// @brief Shows the "select a tensor" hint.
    void clear();
    /// @brief Appends a titled section below the metadata; the panel takes ownership of @p content.
    void addSection(const QString& title, QWidget* content);

    /// @brief The tensor shown, or empty.
    QString tensorName() const { return m_tensorName; }
    /// @brief What is shown (kind and name).
    const TensorSelection& selection() const { return m_selection; }
    /// @brief The empty-state hint, or empty when something is shown.
    QString hintText() const;
    /// @brief Text of a metadata field by its label ("File", "Shape", ... for a tensor; "Tensors", "Bytes",
    /// ... for a module or group), for tests and screenshots.
    QString fieldText(const QString& label) const;

  private:
    QLabel* addField(const QString& label);
    void showContent(bool content);

    QLabel* m_hint = nullptr;
    QWidget* m_content = nullptr;
    QGroupBox* m_metadata = nullptr;
    QFormLayout* m_form = nullptr;
    QGroupBox* m_summary = nullptr; ///< a module's or group's fields
    QFormLayout* m_summaryForm = nullptr;
    QVBoxLayout* m_sections = nullptr;
    QList<QPair<QString, QLabel*>> m_fields;
    QList<QPair<QString, QLabel*>> m_summaryFields;
    QString m_tensorName;
    TensorSelection m_selection;
};

} // namespace spark
