#include "views/plan/planentrylistmodel.h"

#include "views/plan/plancontroller.h"

#include <QApplication>
#include <QColor>
#include <QFont>
#include <QStyle>

namespace spark {

PlanEntryListModel::PlanEntryListModel(PlanController* controller, PlanList list, QObject* parent)
    : QAbstractTableModel(parent), m_controller(controller), m_list(list)
{
    connect(m_controller, &PlanController::editsChanged, this, &PlanEntryListModel::refresh);
    connect(m_controller, &PlanController::planChanged, this, &PlanEntryListModel::refresh);
    refresh();
}

void PlanEntryListModel::refresh()
{
    const QStringList preset = m_controller->presetEntries(m_list);
    const QStringList user = m_controller->userEntries(m_list);
    auto plan = m_controller->plan();
    auto roundingPreviews = m_controller->roundingPreviews();
    // Pair each row with its preview when the plan was made from exactly these entries; while an edit
    // waits for the debounce the row shows its text and a pending preview.
    std::vector<const EntryPreview*> previews(static_cast<std::size_t>(preset.size() + user.size()), nullptr);
    // Rounding rules are previewed apart from core's entries (with the scheme rules' kind).
    const bool rounding = m_list == PlanList::Roundings;
    if (plan && (!rounding || roundingPreviews)) {
        std::vector<const EntryPreview*> ofKind;
        for (const auto& e : rounding ? *roundingPreviews : plan->entries) {
            if (e.kind == m_list.entryKind()) {
                ofKind.push_back(&e);
            }
        }
        const QStringList all = preset + user;
        if (ofKind.size() == static_cast<std::size_t>(all.size())) {
            for (std::size_t i = 0; i < ofKind.size(); ++i) {
                if (QString::fromStdString(ofKind[i]->entry) == all[static_cast<qsizetype>(i)]) {
                    previews[i] = ofKind[i];
                }
            }
        }
    }
    const bool sameShape = preset.size() == m_preset.size() && user.size() == m_user.size();
    if (sameShape) {
        // Same rows: update in place, so an editor open on a row (live typing) stays open.
        m_preset = preset;
        m_user = user;
        m_plan = std::move(plan);
        m_roundingPreviews = std::move(roundingPreviews);
        m_previews = std::move(previews);
        if (rowCount() > 0) {
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    m_preset = preset;
    m_user = user;
    m_plan = std::move(plan);
    m_roundingPreviews = std::move(roundingPreviews);
    m_previews = std::move(previews);
    endResetModel();
}

const EntryPreview* PlanEntryListModel::previewAt(int row) const
{
    return row >= 0 && static_cast<std::size_t>(row) < m_previews.size()
               ? m_previews[static_cast<std::size_t>(row)]
               : nullptr;
}

int PlanEntryListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_preset.size() + m_user.size());
}

int PlanEntryListModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanEntryListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Entry:
        return tr("Entry");
    case Matches:
        return tr("Matches");
    case Source:
        return tr("Source");
    case Problem:
        return tr("Problem");
    default:
        return {};
    }
}

Qt::ItemFlags PlanEntryListModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Entry && index.row() >= m_preset.size()) {
        f |= Qt::ItemIsEditable;
    }
    return f;
}

QVariant PlanEntryListModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const int row = index.row();
    const bool isPreset = row < m_preset.size();
    const QString text = isPreset ? m_preset[row] : m_user[row - m_preset.size()];
    const EntryPreview* preview = previewAt(row);
    const bool hasError = preview && !preview->valid;
    // A preset is written for every draft of its architecture: an entry for a module this draft lacks (an
    // EAGLE-3 head without embed_tokens) is no problem of the user's.
    const bool absentHere = isPreset && preview && preview->valid && preview->matches.empty();
    const bool hasWarning = preview && preview->valid && !preview->warnings.empty() && !absentHere;
    switch (role) {
    case UserIndexRole:
        return isPreset ? -1 : row - static_cast<int>(m_preset.size());
    case HasErrorRole:
        return hasError;
    case MatchedModulesRole: {
        QStringList modules;
        if (preview) {
            for (const auto& m : preview->matches) {
                if (!modules.contains(QString::fromStdString(m.module))) {
                    modules.append(QString::fromStdString(m.module));
                }
            }
        }
        return modules;
    }
    default:
        break;
    }
    switch (index.column()) {
    case Entry:
        if (role == Qt::DisplayRole || role == Qt::EditRole) {
            return text;
        }
        if (role == Qt::FontRole) {
            QFont font = QApplication::font();
            font.setFamily(QStringLiteral("monospace"));
            font.setStyleHint(QFont::Monospace);
            font.setItalic(isPreset);
            return font;
        }
        if (role == Qt::DecorationRole) {
            if (hasError) {
                return QApplication::style()->standardIcon(QStyle::SP_MessageBoxCritical);
            }
            if (hasWarning) {
                return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
            }
        }
        if (role == Qt::ToolTipRole) {
            return isPreset
                       ? tr("From the preset (read-only). `re:` entries are Python re.match: anchored at "
                            "the start only; anything else is an exact vLLM module name.")
                       : tr("Double-click to edit. `re:` entries are Python re.match: anchored at the "
                            "start only; anything else is an exact vLLM module name.");
        }
        return {};
    case Matches:
        if (role == Qt::DisplayRole) {
            return preview ? QVariant(static_cast<int>(preview->matches.size()))
                           : QVariant(QStringLiteral("…"));
        }
        if (role == Qt::TextAlignmentRole) {
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        }
        if (role == Qt::ToolTipRole && preview && !preview->matches.empty()) {
            QStringList lines;
            for (const auto& m : preview->matches) {
                lines.append(QString::fromStdString(m.vllmName + "  ←  " + m.module));
            }
            return lines.join(QLatin1Char('\n'));
        }
        return {};
    case Source:
        if (role == Qt::DisplayRole) {
            return isPreset ? tr("preset") : tr("yours");
        }
        return {};
    case Problem:
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
            if (!preview) {
                return {};
            }
            if (hasError) {
                // core's message already names the position inside the pattern.
                return QString::fromStdString(preview->error);
            }
            if (absentHere) {
                return tr("not in this draft");
            }
            QStringList warnings;
            for (const auto& w : preview->warnings) {
                warnings.append(QString::fromStdString(w));
            }
            return warnings.join(QStringLiteral("; "));
        }
        if (role == Qt::ForegroundRole && (hasError || hasWarning)) {
            // Readable on light and dark palettes alike.
            const bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
            if (hasError) {
                return dark ? QColor(255, 128, 128) : QColor(176, 0, 32);
            }
            return dark ? QColor(255, 200, 100) : QColor(150, 90, 0);
        }
        return {};
    default:
        return {};
    }
}

bool PlanEntryListModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::EditRole || !(flags(index) & Qt::ItemIsEditable)) {
        return false;
    }
    const int user = index.row() - static_cast<int>(m_preset.size());
    if (value.toString() == m_user.value(user)) {
        return false;
    }
    const QString key =
        m_session > 0
            ? QStringLiteral("entry:%1:%2:%3").arg(static_cast<int>(m_list.id)).arg(user).arg(m_session)
            : QString();
    m_controller->setEntry(m_list, user, value.toString(), key);
    return true;
}

} // namespace spark
