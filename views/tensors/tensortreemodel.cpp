#include "views/tensors/tensortreemodel.h"

#include "views/shared/formatting.h"
#include "views/shared/schemecolors.h"
#include "views/tensors/tensorcolumns.h"

#include <QFont>
#include <QSet>

namespace spark {

namespace {

// "layers.0.mlp.down_proj" under "layers.0" → "mlp.down_proj"; a name not below the prefix stays whole.
QString relativeName(const QString& name, const QString& prefix)
{
    if (name.size() > prefix.size() + 1 && name.startsWith(prefix) &&
        name.at(prefix.size()) == QLatin1Char('.')) {
        return name.mid(prefix.size() + 1);
    }
    return name;
}

} // namespace

TensorTreeModel::TensorTreeModel(QObject* parent) : TensorItemModel(parent) {}

void TensorTreeModel::resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                                std::shared_ptr<const AnalysisTable> analysis)
{
    beginResetModel();
    m_snapshot = std::move(snapshot);
    m_analysis = std::move(analysis);
    build();
    endResetModel();
}

void TensorTreeModel::build()
{
    m_nodes.clear();
    m_topLevel.clear();
    m_nodeOfTensor.clear();
    if (!m_snapshot) {
        return;
    }
    const auto& rows = m_snapshot->rows;
    m_nodeOfTensor.assign(rows.size(), -1);
    QHash<QString, int> groups;
    QHash<QString, int> modules;
    auto addNode = [this](Node node, int parent) {
        const int id = static_cast<int>(m_nodes.size());
        auto& siblings = parent < 0 ? m_topLevel : m_nodes[static_cast<std::size_t>(parent)].children;
        node.parent = parent;
        node.rowInParent = static_cast<int>(siblings.size());
        siblings.push_back(id);
        m_nodes.push_back(std::move(node));
        return id;
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        int group = groups.value(row.group, -1);
        if (group < 0) {
            Node node;
            node.kind = TensorColumns::GroupNode;
            node.label = row.group;
            node.fullName = row.group;
            node.dtype = row.dtype;
            group = addNode(std::move(node), -1);
            groups.insert(row.group, group);
        }
        // Module names are unique across groups (a group is a prefix of its modules), but keying by both
        // keeps a malformed name from joining two groups' trees.
        const QString moduleKey = row.group + QLatin1Char('\n') + row.module;
        int module = modules.value(moduleKey, -1);
        if (module < 0) {
            Node node;
            node.kind = TensorColumns::ModuleNode;
            node.label = relativeName(row.module, row.group);
            node.fullName = row.module;
            node.dtype = row.dtype;
            node.tensorRow = static_cast<int>(i);
            module = addNode(std::move(node), group);
            modules.insert(moduleKey, module);
        }
        Node node;
        node.kind = TensorColumns::TensorNode;
        node.label = relativeName(row.name, row.module);
        node.fullName = row.name;
        node.tensorRow = static_cast<int>(i);
        node.params = row.params;
        node.bytes = row.bytes;
        node.share = row.share;
        node.dtype = row.dtype;
        m_nodeOfTensor[i] = addNode(std::move(node), module);
        for (const int owner : {module, group}) {
            auto& parentNode = m_nodes[static_cast<std::size_t>(owner)];
            parentNode.params += row.params;
            parentNode.bytes += row.bytes;
            parentNode.share += row.share;
            if (parentNode.dtype != row.dtype) {
                parentNode.dtype.clear();
            }
        }
        // The module stands for its weight when it has one: that is the tensor a plan decides about.
        if (row.name == row.module + QStringLiteral(".weight")) {
            m_nodes[static_cast<std::size_t>(module)].tensorRow = static_cast<int>(i);
        }
    }
    for (const int group : m_topLevel) {
        updateWorst(group);
    }
}

bool TensorTreeModel::updateWorst(int group)
{
    auto& node = m_nodes[static_cast<std::size_t>(group)];
    TensorRowResult worst;
    auto raise = [](std::optional<double>& into, const std::optional<double>& value) {
        if (value && (!into || *value > *into)) {
            into = value;
        }
    };
    for (const int module : node.children) {
        for (const int tensor : m_nodes[static_cast<std::size_t>(module)].children) {
            if (const auto* analysis = analysisOf(m_nodes[static_cast<std::size_t>(tensor)].tensorRow)) {
                raise(worst.relError, analysis->relError);
                raise(worst.maxError, analysis->maxError);
            }
        }
    }
    const bool changed = worst.relError != node.worst.relError || worst.maxError != node.worst.maxError;
    node.worst = worst;
    return changed;
}

void TensorTreeModel::updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows)
{
    m_analysis = std::move(analysis);
    QSet<int> modulesDone;
    QSet<int> groups;
    for (const int row : rows) {
        if (row < 0 || static_cast<std::size_t>(row) >= m_nodeOfTensor.size()) {
            continue;
        }
        const int tensor = m_nodeOfTensor[static_cast<std::size_t>(row)];
        Q_EMIT dataChanged(indexOfNode(tensor, TensorColumns::FirstAnalysisColumn),
                           indexOfNode(tensor, TensorColumns::LastAnalysisColumn));
        const int module = m_nodes[static_cast<std::size_t>(tensor)].parent;
        if (m_nodes[static_cast<std::size_t>(module)].tensorRow == row && !modulesDone.contains(module)) {
            modulesDone.insert(module);
            Q_EMIT dataChanged(indexOfNode(module, TensorColumns::FirstAnalysisColumn),
                               indexOfNode(module, TensorColumns::LastAnalysisColumn));
        }
        groups.insert(m_nodes[static_cast<std::size_t>(module)].parent);
    }
    // A group row changes only when its worst error does, which most results of a run leave alone.
    for (const int group : std::as_const(groups)) {
        if (group >= 0 && updateWorst(group)) {
            Q_EMIT dataChanged(indexOfNode(group, TensorColumns::FirstAnalysisColumn),
                               indexOfNode(group, TensorColumns::LastAnalysisColumn));
        }
    }
}

QModelIndex TensorTreeModel::indexOfTensor(const QString& name) const
{
    const int row = m_snapshot ? m_snapshot->rowOf(name) : -1;
    if (row < 0) {
        return {};
    }
    return indexOfNode(m_nodeOfTensor[static_cast<std::size_t>(row)], 0);
}

QModelIndex TensorTreeModel::indexOfNode(int node, int column) const
{
    if (node < 0) {
        return {};
    }
    return createIndex(m_nodes[static_cast<std::size_t>(node)].rowInParent, column,
                       static_cast<quintptr>(node));
}

const TensorTreeModel::Node* TensorTreeModel::nodeOf(const QModelIndex& index) const
{
    if (!index.isValid() || index.internalId() >= m_nodes.size()) {
        return nullptr;
    }
    return &m_nodes[index.internalId()];
}

QModelIndex TensorTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= TensorColumns::Count) {
        return {};
    }
    if (!parent.isValid()) {
        return row < static_cast<int>(m_topLevel.size())
                   ? indexOfNode(m_topLevel[static_cast<std::size_t>(row)], column)
                   : QModelIndex();
    }
    if (parent.column() != 0) {
        return {};
    }
    const Node* node = nodeOf(parent);
    if (!node || row >= static_cast<int>(node->children.size())) {
        return {};
    }
    return indexOfNode(node->children[static_cast<std::size_t>(row)], column);
}

QModelIndex TensorTreeModel::parent(const QModelIndex& child) const
{
    const Node* node = nodeOf(child);
    return node ? indexOfNode(node->parent, 0) : QModelIndex();
}

int TensorTreeModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid()) {
        return static_cast<int>(m_topLevel.size());
    }
    if (parent.column() != 0) {
        return 0;
    }
    const Node* node = nodeOf(parent);
    return node ? static_cast<int>(node->children.size()) : 0;
}

int TensorTreeModel::columnCount(const QModelIndex& /*parent*/) const
{
    return TensorColumns::Count;
}

const TensorRowResult* TensorTreeModel::analysisOf(int tensorRow) const
{
    if (!m_analysis || tensorRow < 0 || static_cast<std::size_t>(tensorRow) >= m_analysis->size()) {
        return nullptr;
    }
    return &(*m_analysis)[static_cast<std::size_t>(tensorRow)];
}

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Node* node = nodeOf(index);
    return node ? nodeData(*node, index.column(), role) : QVariant();
}

Qt::ItemFlags TensorTreeModel::flags(const QModelIndex& index) const
{
    // A module row holds its weight's row (the decision is per module).
    const Node* node = nodeOf(index);
    return TensorColumns::decisionFlags(TensorItemModel::flags(index), index,
                                        node && node->tensorRow >= 0 ? analysisOf(node->tensorRow) : nullptr);
}

bool TensorTreeModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    const Node* node = nodeOf(index);
    if (!node || node->tensorRow < 0) {
        return false;
    }
    const QString module = m_snapshot->rows[static_cast<std::size_t>(node->tensorRow)].module;
    if (TensorColumns::isDecisionToggle(index, value, role)) {
        Q_EMIT decisionToggleRequested(module);
    } else if (TensorColumns::isDecisionEdit(index, value, role)) {
        Q_EMIT schemeChangeRequested(module, value.toString());
    }
    return false;
}

QVariant TensorTreeModel::nodeData(const Node& node, int column, int role) const
{
    const bool isTensor = node.kind == TensorColumns::TensorNode;
    const bool isModule = node.kind == TensorColumns::ModuleNode;
    const auto& rows = m_snapshot->rows;
    switch (role) {
    case TensorColumns::TensorNameRole:
        return isTensor ? node.fullName : QString();
    case TensorColumns::NodeKindRole:
        return node.kind;
    case TensorColumns::RowRole:
        return isTensor ? node.tensorRow : -1;
    case TensorColumns::NodeNameRole:
        return node.fullName;
    case Qt::ToolTipRole:
        if (column == TensorColumns::Name) {
            return node.fullName;
        }
        return node.tensorRow >= 0 ? TensorColumns::analysisToolTip(analysisOf(node.tensorRow), column)
                                   : QVariant();
    case Qt::TextAlignmentRole:
        return TensorColumns::alignment(column);
    case Qt::CheckStateRole:
        // On the module row (decisions are per module), and on a lone tensor row in flat lists.
        if (column != TensorColumns::Decision || !(isModule || isTensor) || node.tensorRow < 0 ||
            (isTensor && node.parent >= 0 &&
             m_nodes[static_cast<std::size_t>(node.parent)].kind == TensorColumns::ModuleNode)) {
            return {};
        }
        return TensorColumns::decisionCheckState(rows[static_cast<std::size_t>(node.tensorRow)],
                                                 analysisOf(node.tensorRow));
    case Qt::BackgroundRole: {
        const auto* analysis = node.tensorRow >= 0 ? analysisOf(node.tensorRow) : nullptr;
        if (column != TensorColumns::Decision || !(isModule || isTensor) || node.tensorRow < 0) {
            return {};
        }
        const QString& stored = rows[static_cast<std::size_t>(node.tensorRow)].storedScheme;
        return !stored.isEmpty() ? schemeBackground(stored)
               : analysis        ? schemeBackground(analysis->decision)
                                 : QVariant();
    }
    case Qt::FontRole:
        if (node.kind == TensorColumns::GroupNode && column == TensorColumns::Name) {
            // Layers stand out from the modules listed under them.
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::DisplayRole:
    case TensorColumns::SortRole:
        break;
    default:
        return {};
    }
    const bool sort = role == TensorColumns::SortRole;
    if (isTensor) {
        const auto& row = rows[static_cast<std::size_t>(node.tensorRow)];
        if (column == TensorColumns::Name) {
            return node.label;
        }
        return sort ? TensorColumns::sortKey(row, analysisOf(node.tensorRow), column)
                    : TensorColumns::display(row, analysisOf(node.tensorRow), column);
    }
    switch (column) {
    case TensorColumns::Name:
        return node.label;
    case TensorColumns::Role:
    case TensorColumns::Shape:
        if (!isModule) {
            return {};
        }
        return sort ? TensorColumns::sortKey(rows[static_cast<std::size_t>(node.tensorRow)], nullptr, column)
                    : TensorColumns::display(rows[static_cast<std::size_t>(node.tensorRow)], nullptr, column);
    case TensorColumns::DType:
        return node.dtype.isEmpty() ? QVariant() : QVariant(node.dtype);
    case TensorColumns::Params:
        return sort ? QVariant::fromValue<qulonglong>(node.params) : QVariant(formatCount(node.params));
    case TensorColumns::Bytes:
        return sort ? QVariant::fromValue<qulonglong>(node.bytes) : QVariant(localizedBytes(node.bytes));
    case TensorColumns::Share:
        return sort ? QVariant(node.share) : QVariant(formatShare(node.share));
    default:
        if (!isModule) {
            // A group: its worst errors (no decision of its own).
            return sort ? TensorColumns::analysisSortKey(&node.worst, column)
                        : TensorColumns::analysisDisplay(&node.worst, column);
        }
        if (column == TensorColumns::Decision) {
            // Module rows show what their tensors show (the stored scheme of a quantized checkpoint).
            const auto& row = rows[static_cast<std::size_t>(node.tensorRow)];
            return sort ? TensorColumns::sortKey(row, analysisOf(node.tensorRow), column)
                        : TensorColumns::display(row, analysisOf(node.tensorRow), column);
        }
        return sort ? TensorColumns::analysisSortKey(analysisOf(node.tensorRow), column)
                    : TensorColumns::analysisDisplay(analysisOf(node.tensorRow), column);
    }
}

QVariant TensorTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= TensorColumns::Count) {
        return TensorItemModel::headerData(section, orientation, role);
    }
    return TensorColumns::header(section, role);
}

} // namespace spark
