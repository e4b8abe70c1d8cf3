#include "views/bench/speedmodelpanel.h"

#include "core/bench/speedmodel.h"
#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"
#include "views/bench/plotroom.h"
#include "views/bench/speedmodelplot.h"
#include "views/shared/localizednumber.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace spark {
namespace {

// The kind selector's items: the open draft's architecture, or an explicit choice.
constexpr int kKindFromDraft = 0;
constexpr int kKindChain = 1;
constexpr int kKindBlock = 2;

QString rates(const std::vector<double>& values)
{
    QStringList out;
    for (const double v : values) {
        out << localizedSignificant(v);
    }
    return out.join(QStringLiteral(", "));
}

} // namespace

SpeedModelPanel::SpeedModelPanel(QWidget* parent)
    : QWidget(parent), m_drafterMs(new QDoubleSpinBox(this)), m_kind(new QComboBox(this)),
      m_savingMs(new QDoubleSpinBox(this)), m_promptLen(new QComboBox(this)), m_error(new QLabel(this)),
      m_assumptions(new QLabel(this)), m_table(new QTableWidget(this)), m_plot(new QCustomPlot(this))
{
    m_drafterMs->setObjectName(QStringLiteral("speedDrafterMs"));
    m_drafterMs->setRange(0, 100000);
    m_drafterMs->setDecimals(3);
    m_drafterMs->setSuffix(tr(" ms"));
    m_drafterMs->setSpecialValueText(tr("not given"));
    m_drafterMs->setToolTip(tr("Profiled time the unquantized drafter spends per verify cycle (all its draft "
                               "steps). The model is only as good as this number."));
    m_kind->setObjectName(QStringLiteral("speedDrafterKind"));
    m_kind->addItem(tr("From the open draft"));
    m_kind->addItem(tr("Chain (EAGLE-3): k draft steps"));
    m_kind->addItem(tr("Block (DFlash, DSpark): one draft forward"));
    m_kind->setToolTip(tr("How the drafter spends a cycle: a chain runs one draft step per speculative "
                          "token, a block drafter one forward for the whole block."));

    m_savingMs->setObjectName(QStringLiteral("speedSavingMs"));
    m_savingMs->setRange(0, 100000);
    m_savingMs->setDecimals(3);
    m_savingMs->setSuffix(tr(" ms"));
    m_savingMs->setSpecialValueText(tr("none"));
    m_savingMs->setToolTip(tr("Drafter time a quantized draft saves per cycle (e.g. the Plan tab's "
                              "prediction): predicts its tok/s on the baseline's cells and compares it with "
                              "a measured quantized arm."));
    m_promptLen->setObjectName(QStringLiteral("speedPromptLen"));
    m_promptLen->setToolTip(tr("The prompt length the plot shows."));

    // Two rows of two inputs: in one row they would make the window over 1000 pixels wide.
    auto* inputs = new QGridLayout;
    auto* drafterLabel = new QLabel(tr("&Drafter time per cycle:"), this);
    drafterLabel->setBuddy(m_drafterMs);
    inputs->addWidget(drafterLabel, 0, 0);
    inputs->addWidget(m_drafterMs, 0, 1);
    auto* kindLabel = new QLabel(tr("&Kind:"), this);
    kindLabel->setBuddy(m_kind);
    inputs->addWidget(kindLabel, 0, 2);
    inputs->addWidget(m_kind, 0, 3);
    auto* savingLabel = new QLabel(tr("&Quantized saving:"), this);
    savingLabel->setBuddy(m_savingMs);
    inputs->addWidget(savingLabel, 1, 0);
    inputs->addWidget(m_savingMs, 1, 1);
    auto* promptLabel = new QLabel(tr("Plot &prompt length:"), this);
    promptLabel->setBuddy(m_promptLen);
    inputs->addWidget(promptLabel, 1, 2);
    inputs->addWidget(m_promptLen, 1, 3, Qt::AlignLeft);
    inputs->setColumnStretch(4, 1);

    m_error->setObjectName(QStringLiteral("speedModelError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("QLabel { color: #d93025; }"));
    m_error->hide();
    m_assumptions->setObjectName(QStringLiteral("speedModelAssumptions"));
    m_assumptions->setWordWrap(true);
    m_assumptions->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_assumptions->setForegroundRole(QPalette::PlaceholderText);

    m_table->setObjectName(QStringLiteral("speedModelTable"));
    m_table->setColumnCount(ColumnCount);
    m_table->setHorizontalHeaderLabels({tr("Arm"), tr("Prompt"), tr("k"), tr("τ(k)"), tr("Cycle ms"),
                                        tr("Drafter share"), tr("Predicted tok/s, k = 0…"), tr("k*"),
                                        tr("Quantized tok/s"), tr("Change"), tr("k′*"), tr("Measured tok/s"),
                                        tr("Residual")});
    m_table->horizontalHeaderItem(TauColumn)->setToolTip(tr("Tokens per verify step at the measured k, "
                                                            "bonus token included (the acceptance length)."));
    m_table->horizontalHeaderItem(BestKColumn)->setToolTip(tr("The k with the highest predicted tok/s."));
    m_table->horizontalHeaderItem(ResidualColumn)
        ->setToolTip(tr("Measured / predicted − 1 for the quantized arm (acceptance assumed unchanged)."));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_plot->setObjectName(QStringLiteral("speedModelPlot"));
    // The legend under the axis rect, in its own layout row, wrapped to the plot's width: it never covers
    // a curve, and beside the rect it left the data 50 px of a 330-pixel plot.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setVisible(true);
    keepPlotDataRoom(*m_plot, true);
    m_plot->installEventFilter(this);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_plot);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(inputs);
    layout->addWidget(m_error);
    layout->addWidget(splitter, 1);
    layout->addWidget(m_assumptions);

    connect(m_drafterMs, &QDoubleSpinBox::valueChanged, this, &SpeedModelPanel::recompute);
    connect(m_savingMs, &QDoubleSpinBox::valueChanged, this, &SpeedModelPanel::recompute);
    connect(m_kind, &QComboBox::currentIndexChanged, this, &SpeedModelPanel::recompute);
    connect(m_promptLen, &QComboBox::currentIndexChanged, this, &SpeedModelPanel::redraw);
    recompute();
}

void SpeedModelPanel::setReport(std::shared_ptr<const BenchReport> report)
{
    m_report = std::move(report);
    updatePromptLens();
    recompute();
}

void SpeedModelPanel::setArchitectureKind(std::optional<DrafterKind> kind, const QString& architecture)
{
    m_architectureKind = kind;
    m_architecture = architecture;
    if (m_kind->currentIndex() == kKindFromDraft) {
        recompute();
    }
}

QString SpeedModelPanel::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

int SpeedModelPanel::shownBestK(const QString& arm, long long promptLen) const
{
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (m_table->item(row, ArmColumn)->text() == arm &&
            m_table->item(row, PromptColumn)->data(Qt::UserRole).toLongLong() == promptLen) {
            bool ok = false;
            const int k = m_table->item(row, BestKColumn)->text().toInt(&ok);
            return ok ? k : -1;
        }
    }
    return -1;
}

void SpeedModelPanel::updatePromptLens()
{
    const QVariant previous = m_promptLen->currentData();
    const QSignalBlocker blocker(m_promptLen);
    m_promptLen->clear();
    if (m_report) {
        for (const auto len : m_report->promptLens) {
            m_promptLen->addItem(len > 0 ? QLocale().toString(len) : tr("unknown"), QVariant::fromValue(len));
        }
    }
    const int index = m_promptLen->findData(previous);
    m_promptLen->setCurrentIndex(index >= 0 ? index : 0);
}

void SpeedModelPanel::recompute()
{
    m_model.reset();
    m_error->hide();
    m_error->clear();
    if (m_report && m_drafterMs->value() > 0) {
        SpeedModelOptions options;
        options.drafterMs = m_drafterMs->value();
        switch (m_kind->currentIndex()) {
        case kKindChain:
            options.kind = DrafterKind::Chain;
            options.kindBasis = "chosen";
            break;
        case kKindBlock:
            options.kind = DrafterKind::Block;
            options.kindBasis = "chosen";
            break;
        default:
            options.kind = m_architectureKind.value_or(DrafterKind::Chain);
            options.kindBasis = m_architectureKind
                                    ? m_architecture.toStdString() + " architecture"
                                    : std::string("assumed: no draft with a known architecture is open");
            break;
        }
        if (m_savingMs->value() > 0) {
            options.savingMs = m_savingMs->value();
        }
        try {
            m_model = std::make_shared<const SpeedModel>(computeSpeedModel(*m_report, options));
        } catch (const SpeedModelError& e) {
            m_error->setText(tr("Speed model: %1").arg(QString::fromStdString(e.what())));
            m_error->show();
        }
    }
    QStringList notes;
    if (m_model) {
        for (const auto& a : m_model->assumptions) {
            notes << QString::fromStdString(a);
        }
        for (const auto& w : m_model->warnings) {
            notes << tr("Warning: %1").arg(QString::fromStdString(w.message));
        }
    } else if (m_report && m_drafterMs->value() <= 0) {
        notes << tr("Enter the profiled drafter time per verify cycle to predict tok/s against k.");
    }
    m_assumptions->setText(notes.join(QLatin1Char('\n')));
    fillTable();
    redraw();
    Q_EMIT modelChanged();
}

void SpeedModelPanel::fillTable()
{
    m_table->setRowCount(0);
    if (!m_model) {
        return;
    }
    m_table->setRowCount(static_cast<int>(m_model->cells.size()));
    int row = 0;
    for (const auto& c : m_model->cells) {
        const auto set = [&](int column, const QString& text, const QString& tip = QString()) {
            auto* item = new QTableWidgetItem(text);
            if (column != ArmColumn && column != RatesColumn) {
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            }
            item->setToolTip(tip);
            m_table->setItem(row, column, item);
            return item;
        };
        set(ArmColumn, QString::fromStdString(c.arm),
            tr("Drafter time %1 ms (%2)")
                .arg(localizedSignificant(c.drafterMs), QString::fromStdString(c.drafterBasis)));
        set(PromptColumn, c.promptLen > 0 ? QLocale().toString(c.promptLen) : tr("unknown"))
            ->setData(Qt::UserRole, QVariant::fromValue(c.promptLen));
        set(KColumn, QString::number(c.k));
        set(TauColumn, localizedSignificant(c.tokensPerVerify.back()),
            tr("a_i = %1").arg(rates(c.acceptance)));
        set(CycleColumn, localizedSignificant(c.cycleMs),
            tr("V₀ = %1 ms, v = %2 ms per token%3")
                .arg(localizedSignificant(c.verifyMs), localizedSignificant(c.verifyMsPerToken),
                     c.noSpeculationArm.empty()
                         ? QString()
                         : tr(" (fitted from '%1')").arg(QString::fromStdString(c.noSpeculationArm))));
        set(DrafterShareColumn, localizedSignificant(100.0 * c.drafterShare(), 3) + QStringLiteral(" %"));
        set(RatesColumn, rates(c.predictedTokS));
        set(BestKColumn, QString::number(c.bestK));
        if (c.quantized) {
            const auto& q = *c.quantized;
            set(QuantizedRateColumn, localizedSignificant(q.predictedTokS),
                tr("D′(j), j = 0…: %1; cycle %2 ms")
                    .arg(rates(q.predictedTokSByK), localizedSignificant(q.cycleMs)));
            set(QuantizedChangeColumn, localizedChangePercent(q.predictedChange));
            set(QuantizedBestKColumn, QString::number(q.bestK));
            if (q.measured) {
                const auto& m = *q.measured;
                set(MeasuredColumn, localizedSignificant(m.measuredTokS),
                    tr("'%1': %2; with its measured acceptance the prediction is %3 tok/s (%4)")
                        .arg(QString::fromStdString(m.arm), localizedChangePercent(m.measuredChange),
                             localizedSignificant(m.predictedTokS),
                             localizedChangePercent(m.predictedChange)));
                set(ResidualColumn, localizedChangePercent(m.residual),
                    tr("%1 with the measured acceptance")
                        .arg(localizedChangePercent(m.residualMeasuredAcceptance)));
            }
        }
        ++row;
    }
}

void SpeedModelPanel::redraw()
{
    if (m_model && m_report) {
        SpeedModelPlot::populate(*m_plot, *m_model, m_report->arms, m_promptLen->currentData().toLongLong());
    } else {
        m_plot->clearPlottables();
        BenchPlot::applyPalette(*m_plot);
    }
    m_plot->legend->setVisible(m_plot->legend->itemCount() > 0);
    QFont legendFont = font();
    legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
    m_plot->legend->setFont(legendFont);
    wrapLegend(*m_plot->legend, m_plot->width());
    m_plot->replot(QCustomPlot::rpQueuedRefresh);
}

bool SpeedModelPanel::eventFilter(QObject* watched, QEvent* event)
{
    // As BenchPlotWidget: the plot itself sees the palette change (dark mode) once it has resolved it.
    if (watched == m_plot && event->type() == QEvent::PaletteChange) {
        redraw();
    } else if (watched == m_plot && event->type() == QEvent::Resize) {
        wrapLegend(*m_plot->legend, m_plot->width()); // QCustomPlot replots itself after a resize
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace spark
