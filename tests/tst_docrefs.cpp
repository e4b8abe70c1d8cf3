// Every "§" reference in the code, the tests, the tools and the docs resolves to a heading of a document the
// repository ships (docs/spec/<name>.md), and every document a source names by file exists. A reference is
// qualified by the nearest document named before it (within a few lines) as "name §" or "name.md", e.g.
// "format-spec §4.3", "bench-formats.md: … §5"; inside docs/spec/<name>.md an unqualified "§N" means that
// same document. A plain word ("rounding") names nothing.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

class TestDocRefs : public QObject
{
    Q_OBJECT

    static QString root() { return QDir::cleanPath(QStringLiteral(SPARK_TEST_DATA "/../..")); }

    static QString readAll(const QString& path)
    {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            return {};
        }
        return QString::fromUtf8(file.readAll());
    }

    static const QStringList& documentNames()
    {
        static const QStringList names{QStringLiteral("format-spec"), QStringLiteral("schemes-spec"),
                                       QStringLiteral("rounding"),    QStringLiteral("draft-forward"),
                                       QStringLiteral("speed-model"), QStringLiteral("bench-formats")};
        return names;
    }

    static QString specPath(const QString& name)
    {
        return root() + QStringLiteral("/docs/spec/%1.md").arg(name);
    }

    /// The section numbers of a document's headings: "### 2.3 Scale…" and "## 2. Packing" give "2.3" and "2".
    static QSet<QString> headingNumbers(const QString& name)
    {
        static const QRegularExpression heading(QStringLiteral("^#+\\s+(\\d+(?:\\.\\d+)*)\\.?\\s"),
                                                QRegularExpression::MultilineOption);
        QSet<QString> numbers;
        const auto text = readAll(specPath(name));
        for (auto it = heading.globalMatch(text); it.hasNext();) {
            numbers.insert(it.next().captured(1));
        }
        return numbers;
    }

    /// Files whose comments or text may cite the documents.
    static QStringList citingFiles()
    {
        QStringList files{root() + QStringLiteral("/README.md")};
        if (QFile::exists(root() + QStringLiteral("/HACKING.md"))) {
            files << root() + QStringLiteral("/HACKING.md");
        }
        const QStringList patterns{QStringLiteral("*.cpp"),         QStringLiteral("*.h"),
                                   QStringLiteral("*.cu"),          QStringLiteral("*.py"),
                                   QStringLiteral("*.sh"),          QStringLiteral("*.md"),
                                   QStringLiteral("CMakeLists.txt")};
        for (const auto* dir : {"core", "views", "app", "tests", "tools", "packaging", "docs"}) {
            QDirIterator it(root() + QLatin1Char('/') + QLatin1String(dir), patterns, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) {
                files << it.next();
            }
        }
        return files;
    }

  private Q_SLOTS:
    void everyDocumentHasNumberedHeadings()
    {
        for (const auto& name : documentNames()) {
            QVERIFY2(headingNumbers(name).size() >= 5, qPrintable(specPath(name)));
        }
    }

    void everySectionReferenceResolves()
    {
        QHash<QString, QSet<QString>> headings;
        for (const auto& name : documentNames()) {
            headings.insert(name, headingNumbers(name));
        }
        static const QRegularExpression reference(QStringLiteral("§(\\d+(?:\\.\\d+)*)"));
        static const QRegularExpression namedDocument(
            QStringLiteral("\\b(format-spec|schemes-spec|rounding|draft-forward|speed-model|bench-formats)"
                           "(?:\\.md\\b|(?=[\\s,/*\"]*§))")); // "§" may follow on the next comment line
        constexpr qsizetype qualifierReach = 300; // a few lines: the comment the reference stands in
        int checked = 0;
        QStringList failures;
        for (const auto& path : citingFiles()) {
            const auto text = readAll(path);
            const auto ownName =
                path.contains(QStringLiteral("/docs/spec/")) ? QFileInfo(path).completeBaseName() : QString();
            for (auto it = reference.globalMatch(text); it.hasNext();) {
                const auto match = it.next();
                // Up to and including the "§", so that a name directly before it qualifies it.
                const auto before = text.mid(qMax<qsizetype>(0, match.capturedStart() - qualifierReach),
                                             qMin(qualifierReach, match.capturedStart()) + 1);
                QString document = ownName;
                for (auto names = namedDocument.globalMatch(before); names.hasNext();) {
                    document = names.next().captured(1);
                }
                const auto line = text.left(match.capturedStart()).count(QLatin1Char('\n')) + 1;
                const auto where = QStringLiteral("%1:%2 %3")
                                       .arg(QDir(root()).relativeFilePath(path))
                                       .arg(line)
                                       .arg(match.captured(0));
                ++checked;
                if (document.isEmpty()) {
                    failures << where + QStringLiteral(" names no document");
                } else if (!headings.value(document).contains(match.captured(1))) {
                    failures << where + QStringLiteral(" has no heading in docs/spec/%1.md").arg(document);
                }
            }
        }
        QVERIFY2(checked > 200, qPrintable(QString::number(checked))); // the scan finds the references at all
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    void everyDocumentLinkResolves()
    {
        static const QRegularExpression link(QStringLiteral("\\]\\(([^)#\\s]+)(?:#[^)]*)?\\)"));
        QStringList failures;
        int checked = 0;
        for (const auto& path : citingFiles()) {
            if (!path.endsWith(QStringLiteral(".md"))) {
                continue;
            }
            // Code is not a link: "f[k](x)" in a formula must not count.
            static const QRegularExpression code(QStringLiteral("```.*?```|`[^`\n]*`"),
                                                 QRegularExpression::DotMatchesEverythingOption);
            const auto text = readAll(path).remove(code);
            for (auto it = link.globalMatch(text); it.hasNext();) {
                const auto target = it.next().captured(1);
                if (target.contains(QStringLiteral("://")) || target.startsWith(QStringLiteral("mailto:"))) {
                    continue;
                }
                ++checked;
                if (!QFileInfo::exists(QFileInfo(path).absolutePath() + QLatin1Char('/') + target)) {
                    failures << QDir(root()).relativeFilePath(path) + QStringLiteral(": ") + target;
                }
            }
        }
        QVERIFY2(checked > 20, qPrintable(QString::number(checked)));
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }

    void noSourceNeedsFilesOutsideTheRepository()
    {
        static const QRegularExpression outside(QStringLiteral("\\.\\./shared|\\bshared/(docs|golden)"));
        QStringList failures;
        for (const auto& path : citingFiles()) {
            const auto text = readAll(path);
            if (const auto match = outside.match(text); match.hasMatch()) {
                failures << QDir(root()).relativeFilePath(path) + QStringLiteral(": ") + match.captured(0);
            }
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestDocRefs)
#include "tst_docrefs.moc"
