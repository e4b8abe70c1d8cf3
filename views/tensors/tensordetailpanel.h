#pragma once

#include <QWidget>

class QFormLayout;
class QLabel;
class QVBoxLayout;

namespace spark {

struct DocumentSnapshot;

/// @brief Shows one tensor's metadata (file, offsets, dtype, shape, sizes, module, group). Later stages
/// add their own sections below it (vLLM name, lint findings, histograms) through addSection() and follow
/// TensorsView::currentTensorChanged themselves, so the panel stays free of plan and analysis code.
class TensorDetailPanel : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorDetailPanel(QWidget* parent = nullptr);

    /// @brief Shows row @p row of @p snapshot.
    void showTensor(const DocumentSnapshot& snapshot, int row);
    /// @brief Shows the "select a tensor" hint.
    void clear();
    /// @brief Appends a titled section below the metadata; the panel takes ownership of @p content.
    void addSection(const QString& title, QWidget* content);

    /// @brief The tensor shown, or empty.
    QString tensorName() const { return m_tensorName; }
    /// @brief Text of a metadata field by its label ("File", "Shape", ...), for tests and screenshots.
    QString fieldText(const QString& label) const;

  private:
    QLabel* addField(const QString& label);

    QLabel* m_hint = nullptr;
    QWidget* m_metadata = nullptr;
    QFormLayout* m_form = nullptr;
    QVBoxLayout* m_sections = nullptr;
    QList<QPair<QString, QLabel*>> m_fields;
    QString m_tensorName;
};

} // namespace spark
