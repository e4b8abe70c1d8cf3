// The rooms of core/ depend downwards only, and core/ knows nothing of the GUI:
//   util < io < quant < plan < audit, bench < forward, export < calibrate, demo, allocate
// (forward reads quantized checkpoints through audit's decoder; GPTQ calibration runs the forward and hands
// the exporter its solved weights; the acceptance-driven allocator needs the forward and the plan). A room
// may include itself and any room of a lower rank; siblings of one rank stay independent. And the planner
// keeps its functions short.
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

class TestLayering : public QObject
{
    Q_OBJECT

    static QString root() { return QStringLiteral(SPARK_TEST_DATA "/../.."); }

    static const QHash<QString, int>& ranks()
    {
        static const QHash<QString, int> rank{
            {QStringLiteral("util"), 0},    {QStringLiteral("io"), 1},      {QStringLiteral("quant"), 2},
            {QStringLiteral("plan"), 3},    {QStringLiteral("audit"), 4},   {QStringLiteral("bench"), 4},
            {QStringLiteral("forward"), 5}, {QStringLiteral("export"), 5},  {QStringLiteral("calibrate"), 6},
            {QStringLiteral("demo"), 6},    {QStringLiteral("allocate"), 6}};
        return rank;
    }

    struct Include
    {
        QString file;
        QString room;
        QString included;
    };

    static QList<Include> coreIncludes()
    {
        static const QRegularExpression include(QStringLiteral("^#include [\"<]([^\">]+)[\">]"),
                                                QRegularExpression::MultilineOption);
        QList<Include> found;
        QDirIterator it(
            root() + QStringLiteral("/core"),
            {QStringLiteral("*.cpp"), QStringLiteral("*.h"), QStringLiteral("*.cu"), QStringLiteral("*.cuh")},
            QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const auto path = it.next();
            const auto relative = path.mid(path.indexOf(QStringLiteral("/core/")) + 1);
            const auto room = relative.section(QLatin1Char('/'), 1, 1);
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly)) {
                continue;
            }
            const auto text = QString::fromUtf8(file.readAll());
            for (auto m = include.globalMatch(text); m.hasNext();) {
                found.append({relative, room, m.next().captured(1)});
            }
        }
        return found;
    }

  private Q_SLOTS:
    void everyRoomIsRanked()
    {
        QDirIterator it(root() + QStringLiteral("/core"), QDir::Dirs | QDir::NoDotAndDotDot);
        while (it.hasNext()) {
            const auto room = QFileInfo(it.next()).fileName();
            QVERIFY2(ranks().contains(room),
                     qPrintable(QStringLiteral("core/%1 has no rank here").arg(room)));
        }
    }

    void includesPointDownwards()
    {
        const auto includes = coreIncludes();
        QVERIFY(includes.size() > 500); // the scan reads the sources at all
        QStringList failures;
        for (const auto& i : includes) {
            if (!i.included.startsWith(QStringLiteral("core/"))) {
                continue;
            }
            if (i.included.count(QLatin1Char('/')) == 1) {
                continue; // core/progress.h: the progress callback every room reports through
            }
            const auto to = i.included.section(QLatin1Char('/'), 1, 1);
            if (to != i.room && ranks().value(to, 99) >= ranks().value(i.room)) {
                failures << QStringLiteral("%1 includes %2 (core/%3 is not below core/%4)")
                                .arg(i.file, i.included, to, i.room);
            }
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    /// The planner stays readable: no function of core/plan longer than 80 lines (from the `{` that opens it
    /// at column 0 to the `}` that closes it). makePlan was once 474.
    void planFunctionsAreShort()
    {
        constexpr int kMaxLines = 80;
        QStringList failures;
        int functions = 0;
        QDirIterator it(root() + QStringLiteral("/core/plan"), {QStringLiteral("*.cpp")}, QDir::Files);
        while (it.hasNext()) {
            QFile file(it.next());
            QVERIFY(file.open(QIODevice::ReadOnly));
            const auto lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
            for (int i = 1; i < lines.size(); ++i) {
                // A body opened at column 0 after a signature (not a namespace, struct or initialiser).
                if (lines[i] != QStringLiteral("{") || !lines[i - 1].contains(QLatin1Char(')'))) {
                    continue;
                }
                int end = i + 1;
                while (end < lines.size() && lines[end] != QStringLiteral("}")) {
                    ++end;
                }
                ++functions;
                if (end - i + 1 > kMaxLines) {
                    failures
                        << QStringLiteral("%1:%2 %3 lines").arg(file.fileName()).arg(i + 1).arg(end - i + 1);
                }
                i = end;
            }
        }
        QVERIFY(functions > 100); // the scan finds the functions at all
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    void coreKnowsNoGui()
    {
        static const QRegularExpression gui(
            QStringLiteral("^(views/|app/|Qt(Widgets|Gui)/|Q(Widget|Application|Painter|Color|Image)\\b)"));
        QStringList failures;
        for (const auto& i : coreIncludes()) {
            if (gui.match(i.included).hasMatch()) {
                failures << i.file + QStringLiteral(" includes ") + i.included;
            }
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestLayering)
#include "tst_layering.moc"
