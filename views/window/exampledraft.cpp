#include "views/window/exampledraft.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace spark {
namespace {

/// The same three folders in both places: packaging installs them from tests/data/trained.
std::optional<ExampleDraft> exampleIn(const QString& root)
{
    const QDir dir(root);
    ExampleDraft example{dir.filePath(QStringLiteral("eagle3")), dir.filePath(QStringLiteral("capture-hs")),
                         dir.filePath(QStringLiteral("target"))};
    const bool complete = QFileInfo::exists(example.draft + QStringLiteral("/config.json")) &&
                          QFileInfo::exists(example.capture + QStringLiteral("/capture.json")) &&
                          QFileInfo::exists(example.target + QStringLiteral("/config.json"));
    if (!complete) {
        return std::nullopt;
    }
    for (auto* path : {&example.draft, &example.capture, &example.target}) {
        *path = QFileInfo(*path).canonicalFilePath();
    }
    return example;
}

} // namespace

std::optional<ExampleDraft> findExampleDraft()
{
    if (auto installed = exampleIn(QCoreApplication::applicationDirPath() +
                                   QStringLiteral("/../share/sparkulator/example"))) {
        return installed;
    }
    return exampleIn(QStringLiteral(SPARK_SOURCE_DIR "/tests/data/trained"));
}

} // namespace spark
