// The trained tiny target, drafts, capture and decoding-loop records under tests/data/trained are the
// project's ground truth for acceptance: every file must be the one the manifest names (sha256), and every
// file there must be named (tools/reference/manifest.py writes the manifest).
#include "core/io/checkpoint.h"
#include "testsupport.h"

#include <QCryptographicHash>
#include <QFile>
#include <QTest>
#include <filesystem>

using namespace spark;

class TestTrainedArtefacts : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void everyFileMatchesTheManifest()
    {
        const auto root = test::dataPath("trained");
        const auto manifest = readJsonFile(root / "manifest.json");
        QCOMPARE(QString::fromStdString(manifest.at("format").get<std::string>()),
                 QStringLiteral("sparkulator-trained-artefacts"));
        const auto& hashes = manifest.at("sha256");
        QVERIFY(hashes.size() >= 8);
        for (const auto& [name, digest] : hashes.items()) {
            QFile file(QString::fromStdString((root / name).string()));
            QVERIFY2(file.open(QIODevice::ReadOnly), name.c_str());
            QCryptographicHash hash(QCryptographicHash::Sha256);
            QVERIFY(hash.addData(&file));
            QVERIFY2(hash.result().toHex().toStdString() == digest.get<std::string>(), name.c_str());
        }
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
            const auto rel = std::filesystem::relative(entry.path(), root).string();
            if (entry.is_regular_file() && rel != "manifest.json" && rel != "README.md") {
                QVERIFY2(hashes.contains(rel), ("not in the manifest: " + rel).c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTrainedArtefacts)
#include "tst_trainedartefacts.moc"
