// Every vLLM issue or PR the code, the lint and the README cite is listed in docs/citations.md, and the
// numbers the table marks "no longer cited" (they were cited for something they do not say) stay out.
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

class TestCitations : public QObject
{
    Q_OBJECT

    static QString root() { return QStringLiteral(SPARK_TEST_DATA "/../.."); }

    static QString readAll(const QString& path)
    {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            return {};
        }
        return QString::fromUtf8(file.readAll());
    }

    /// "vllm#N" and "vllm PR #N" in the sources and the README, with the file that cites each.
    static QMap<QString, QString> citedNumbers()
    {
        static const QRegularExpression cite(QStringLiteral("vllm(?:#| PR #)(\\d+)"),
                                             QRegularExpression::CaseInsensitiveOption);
        QMap<QString, QString> cited;
        auto scan = [&](const QString& path) {
            const auto text = readAll(path);
            for (auto it = cite.globalMatch(text); it.hasNext();) {
                cited.insert(it.next().captured(1), path);
            }
        };
        for (const auto* dir : {"core", "views", "app"}) {
            QDirIterator it(root() + QLatin1Char('/') + QLatin1String(dir),
                            {QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) {
                scan(it.next());
            }
        }
        scan(root() + QStringLiteral("/README.md"));
        return cited;
    }

  private Q_SLOTS:
    void everyCitationIsInTheTable()
    {
        const auto table = readAll(root() + QStringLiteral("/docs/citations.md"));
        QVERIFY(!table.isEmpty());
        const auto cited = citedNumbers();
        QVERIFY(cited.contains(QStringLiteral("37280"))); // the scan finds citations at all
        for (auto it = cited.cbegin(); it != cited.cend(); ++it) {
            const auto row = QStringLiteral("| vllm#%1 |").arg(it.key());
            QVERIFY2(table.contains(row),
                     qPrintable(QStringLiteral("vllm#%1 (cited in %2) is not in docs/citations.md")
                                    .arg(it.key(), it.value())));
        }
    }

    void wrongCitationsStayOut()
    {
        const auto table = readAll(root() + QStringLiteral("/docs/citations.md"));
        static const QRegularExpression retired(
            QStringLiteral("^\\| vllm#(\\d+) \\|.*\\*\\*no longer cited\\*\\*"),
            QRegularExpression::MultilineOption);
        QSet<QString> retiredNumbers;
        for (auto it = retired.globalMatch(table); it.hasNext();) {
            retiredNumbers.insert(it.next().captured(1));
        }
        QVERIFY(retiredNumbers.contains(QStringLiteral("52434")));
        QVERIFY(retiredNumbers.contains(QStringLiteral("52543")));
        const auto cited = citedNumbers();
        for (const auto& number : retiredNumbers) {
            QVERIFY2(!cited.contains(number),
                     qPrintable(QStringLiteral("vllm#%1 is cited in %2").arg(number, cited.value(number))));
        }
    }
};

QTEST_GUILESS_MAIN(TestCitations)
#include "tst_citations.moc"
