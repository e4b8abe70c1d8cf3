#include "views/plan/lintmodel.h"

#include "core/audit/checker.h"
#include "core/plan/lintrules.h"
#include "core/plan/quantplan.h"

#include <QApplication>
#include <QStyle>
#include <algorithm>
#include <numeric>

namespace spark {

LintModel::LintModel(QObject* parent) : QAbstractTableModel(parent) {}

void LintModel::resetData(std::shared_ptr<const QuantPlan> plan)
{
    // Findings come and go with every edit, so their rows are not stable: reset.
    beginResetModel();
    m_plan = std::move(plan);
    sortRows();
    endResetModel();
}

void LintModel::setCheckReport(std::shared_ptr<const CheckReport> report)
{
    beginResetModel();
    m_check = std::move(report);
    sortRows();
    endResetModel();
}

const std::vector<LintFinding>* LintModel::findings() const
{
    return m_check ? &m_check->findings : m_plan ? &m_plan->lint : nullptr;
}

void LintModel::sortRows()
{
    m_order.clear();
    const auto* list = findings();
    if (!list) {
        return;
    }
    m_order.resize(list->size());
    std::iota(m_order.begin(), m_order.end(), std::size_t{0});
    // LintSeverity runs Info < Warning < Error: the most severe first, whatever order the plan found them in.
    std::stable_sort(m_order.begin(), m_order.end(), [list](std::size_t a, std::size_t b) {
        return static_cast<int>((*list)[a].severity) > static_cast<int>((*list)[b].severity);
    });
}

const LintFinding& LintModel::findingAt(int row) const
{
    return (*findings())[m_order[static_cast<std::size_t>(row)]];
}

QString LintModel::ruleDescription(const QString& id)
{
    const std::string key = id.toStdString();
    auto text = lintRuleDescription(key);
    if (text.empty()) {
        for (const auto& rule : checkRules()) {
            if (rule.id == key) {
                text = rule.description;
                break;
            }
        }
    }
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

int LintModel::rowCount(const QModelIndex& parent) const
{
    const auto* list = findings();
    return parent.isValid() || !list ? 0 : static_cast<int>(std::min(list->size(), m_order.size()));
}

int LintModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LintModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Severity:
        return tr("Severity");
    case Id:
        return tr("Rule");
    case Modules:
        return tr("Modules");
    case Message:
        return tr("Finding");
    default:
        return {};
    }
}

QVariant LintModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto& f = findingAt(index.row());
    const QString id = QString::fromStdString(f.id);
    switch (role) {
    case ModulesRole: {
        QStringList modules;
        for (const auto& m : f.modules) {
            modules.append(QString::fromStdString(m));
        }
        return modules;
    }
    case SeverityRole:
        return static_cast<int>(f.severity);
    case Qt::ToolTipRole: {
        QString tip = ruleDescription(id);
        if (!f.citation.empty()) {
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("Source: %1").arg(QString::fromStdString(f.citation));
        }
        if (!f.modules.empty()) {
            tip += QStringLiteral("\n") + tr("Click to select its modules in the Tensors tab.");
        }
        return tip;
    }
    default:
        break;
    }
    switch (index.column()) {
    case Severity:
        if (role == Qt::DisplayRole) {
            return QString::fromLatin1(severityName(f.severity).data(),
                                       static_cast<qsizetype>(severityName(f.severity).size()));
        }
        if (role == Qt::DecorationRole) {
            const auto icon = f.severity == LintSeverity::Error     ? QStyle::SP_MessageBoxCritical
                              : f.severity == LintSeverity::Warning ? QStyle::SP_MessageBoxWarning
                                                                    : QStyle::SP_MessageBoxInformation;
            return QApplication::style()->standardIcon(icon);
        }
        break;
    case Id:
        if (role == Qt::DisplayRole) {
            return id;
        }
        break;
    case Modules:
        if (role == Qt::DisplayRole) {
            QStringList modules;
            for (const auto& m : f.modules) {
                modules.append(QString::fromStdString(m));
            }
            return modules.join(QStringLiteral(", "));
        }
        break;
    case Message:
        if (role == Qt::DisplayRole) {
            return QString::fromStdString(f.message);
        }
        break;
    default:
        break;
    }
    return {};
}

} // namespace spark
