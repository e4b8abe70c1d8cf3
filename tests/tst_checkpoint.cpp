// Checkpoint folders and indexes, the sharded atomic writer, and round trips through both.
#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"
#include "core/io/shardedwriter.h"
#include "core/io/stagingdirectory.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace spark;
namespace fs = std::filesystem;

namespace {

/// Tensors whose bytes are a function of their name, so any mix-up shows in a byte comparison.
std::vector<PlannedTensor> sampleTensors()
{
    std::vector<PlannedTensor> tensors;
    const std::vector<TensorSpec> specs{{"layers.0.mlp.down_proj.weight", DType::BF16, {64, 128}},
                                        {"layers.0.mlp.up_proj.weight", DType::BF16, {128, 64}},
                                        {"norm.weight", DType::F32, {64}},
                                        {"d2t", DType::I64, {16}},
                                        {"t2d", DType::Bool, {32}},
                                        {"scalar", DType::F64, {}},
                                        {"empty", DType::BF16, {0, 8}}};
    for (const auto& spec : specs) {
        tensors.push_back({spec, [spec](ByteSink& sink) {
                               std::vector<std::byte> bytes(spec.byteSize());
                               for (std::size_t i = 0; i < bytes.size(); ++i) {
                                   bytes[i] = static_cast<std::byte>((i * 31 + spec.name.size()) & 0xFF);
                               }
                               // Write in uneven pieces: producers may stream.
                               std::size_t done = 0;
                               while (done < bytes.size()) {
                                   const auto n = std::min<std::size_t>(777, bytes.size() - done);
                                   sink.write(std::span<const std::byte>(bytes.data() + done, n));
                                   done += n;
                               }
                           }});
    }
    return tensors;
}

std::string expectedBytes(const TensorSpec& spec)
{
    std::string bytes(spec.byteSize(), '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<char>((i * 31 + spec.name.size()) & 0xFF);
    }
    return bytes;
}

void writeIndex(const fs::path& folder, const nlohmann::json& weightMap)
{
    test::writeFile(folder / "model.safetensors.index.json",
                    nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", weightMap}}.dump());
}

fs::path tempPath(const QTemporaryDir& dir)
{
    return fs::path(dir.path().toStdString());
}

} // namespace

class TestCheckpoint : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void singleFileRoundTrip();
    void shardedRoundTrip();
    void rewriteIsByteIdentical();
    void folderWithoutIndexLoadsEverySafetensors();
    void symlinkedShardsOpen();
    void indexErrors_data();
    void indexErrors();
    void duplicateAcrossShards();
    void stagingRefusesInput();
    void stagingRefusesNonEmptyDestination();
    void cancelLeavesNothing();
    void missingPath();
};

void TestCheckpoint::singleFileRoundTrip()
{
    QTemporaryDir dir;
    const auto out = tempPath(dir) / "not" / "yet" / "out"; // missing parents are created
    {
        StagingDirectory staging(out, {});
        const auto result = writeSafetensorsShards(staging.path(), sampleTensors());
        QCOMPARE(result.files, std::vector<std::string>{"model.safetensors"});
        staging.commit();
    }
    QVERIFY(!fs::exists(out / "model.safetensors.index.json"));
    const auto cp = Checkpoint::open(out);
    QCOMPARE(cp.tensors().size(), std::size_t{7});
    for (const auto& planned : sampleTensors()) {
        const auto* t = cp.find(planned.spec.name);
        QVERIFY(t);
        const auto bytes = cp.bytes(*t);
        QCOMPARE(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                 expectedBytes(planned.spec));
        QCOMPARE(t->info.shape, planned.spec.shape);
    }
    QCOMPARE(cp.fileOf(cp.tensors().front()).header().metadata.at("format"), std::string("pt"));
}

void TestCheckpoint::shardedRoundTrip()
{
    QTemporaryDir dir;
    const auto out = tempPath(dir) / "sharded";
    std::uint64_t total = 0;
    for (const auto& t : sampleTensors()) {
        total += t.spec.byteSize();
    }
    {
        StagingDirectory staging(out, {});
        const auto result = writeSafetensorsShards(staging.path(), sampleTensors(), {10000, {}});
        // Greedy in name order: [d2t, empty] [down_proj] [up_proj] [norm, scalar, t2d].
        QCOMPARE(result.files.size(), std::size_t{4});
        QCOMPARE(result.files[0], std::string("model-00001-of-00004.safetensors"));
        QCOMPARE(result.totalSize, total);
        staging.commit();
    }
    const auto index = readJsonFile(out / "model.safetensors.index.json");
    QCOMPARE(index["metadata"]["total_size"].get<std::uint64_t>(), total);
    QCOMPARE(index["weight_map"].size(), std::size_t{7});
    const auto cp = Checkpoint::open(out);
    QVERIFY(cp.hasIndex());
    QCOMPARE(cp.shards().size(), std::size_t{4});
    QCOMPARE(cp.totalBytes(), total);
    for (const auto& planned : sampleTensors()) {
        const auto* t = cp.find(planned.spec.name);
        QVERIFY(t);
        QCOMPARE(cp.fileNameOf(*t), index["weight_map"][planned.spec.name].get<std::string>());
        const auto bytes = cp.bytes(*t);
        QCOMPARE(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                 expectedBytes(planned.spec));
    }
    // Opening the index file itself is the same checkpoint.
    QCOMPARE(Checkpoint::open(out / "model.safetensors.index.json").tensors().size(), std::size_t{7});
}

void TestCheckpoint::rewriteIsByteIdentical()
{
    // Reading a reference-layout file and writing its tensors again reproduces it byte for byte.
    QTemporaryDir dir;
    const auto first = tempPath(dir) / "a";
    const auto second = tempPath(dir) / "b";
    {
        StagingDirectory staging(first, {});
        writeSafetensorsShards(staging.path(), sampleTensors());
        staging.commit();
    }
    const auto cp = Checkpoint::open(first);
    std::vector<PlannedTensor> copies;
    for (const auto& t : cp.tensors()) {
        copies.push_back({{t.info.name, t.info.dtype, t.info.shape},
                          [&cp, &t](ByteSink& sink) { sink.write(cp.bytes(t)); }});
    }
    {
        StagingDirectory staging(second, {first});
        writeSafetensorsShards(staging.path(), std::move(copies));
        staging.commit();
    }
    QCOMPARE(test::readFile(second / "model.safetensors"), test::readFile(first / "model.safetensors"));
}

void TestCheckpoint::folderWithoutIndexLoadsEverySafetensors()
{
    QTemporaryDir dir;
    const auto folder = tempPath(dir);
    test::writeFile(folder / "a.safetensors",
                    test::safetensorsImage(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
    test::writeFile(folder / "b.safetensors",
                    test::safetensorsImage(R"({"y":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2));
    test::writeFile(folder / "config.json", R"({"architectures":["DFlashDraftModel"]})");
    const auto cp = Checkpoint::open(folder);
    QCOMPARE(cp.shards().size(), std::size_t{2});
    QCOMPARE(cp.tensors().size(), std::size_t{2});
    QCOMPARE(cp.config()["architectures"][0].get<std::string>(), std::string("DFlashDraftModel"));
    // A single file opens alone, with the folder's config.
    const auto single = Checkpoint::open(folder / "b.safetensors");
    QCOMPARE(single.tensors().size(), std::size_t{1});
    QVERIFY(!single.config().empty());
}

void TestCheckpoint::symlinkedShardsOpen()
{
    // The Hugging Face cache layout: snapshots/<rev>/*.safetensors -> ../../blobs/<hash>.
    QTemporaryDir dir;
    const auto root = tempPath(dir);
    test::writeFile(root / "blobs" / "abc123",
                    test::safetensorsImage(R"({"w":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})", 3));
    fs::create_directories(root / "snapshots" / "rev");
    fs::create_symlink("../../blobs/abc123", root / "snapshots" / "rev" / "model.safetensors");
    const auto cp = Checkpoint::open(root / "snapshots" / "rev");
    QCOMPARE(cp.tensors().size(), std::size_t{1});
    QCOMPARE(cp.tensors()[0].info.name, std::string("w"));
}

void TestCheckpoint::indexErrors_data()
{
    QTest::addColumn<QString>("weightMap");
    QTest::addColumn<QString>("message");
    QTest::addRow("path traversal") << R"({"x":"../x.safetensors"})"
                                    << "not a plain file name";
    QTest::addRow("absolute path") << R"({"x":"/etc/passwd"})"
                                   << "not a plain file name";
    QTest::addRow("missing shard") << R"({"x":"nope.safetensors"})"
                                   << "is missing";
    QTest::addRow("listed in another shard")
        << R"({"x":"b.safetensors","y":"a.safetensors"})"
        << "weight_map lists the tensor in 'b.safetensors' but it is in 'a.safetensors'";
    QTest::addRow("listed but absent") << R"({"x":"a.safetensors","y":"b.safetensors","z":"a.safetensors"})"
                                       << "does not contain it";
    QTest::addRow("non-string") << R"({"x":1})"
                                << "not a string";
    QTest::addRow("duplicate key") << R"({"x":"a.safetensors","x":"a.safetensors"})"
                                   << "duplicate key 'x'";
}

void TestCheckpoint::indexErrors()
{
    QFETCH(QString, weightMap);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto folder = tempPath(dir);
    test::writeFile(folder / "a.safetensors",
                    test::safetensorsImage(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
    test::writeFile(folder / "b.safetensors",
                    test::safetensorsImage(R"({"y":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1));
    test::writeFile(folder / "model.safetensors.index.json",
                    R"({"metadata":{},"weight_map":)" + weightMap.toStdString() + "}");
    try {
        Checkpoint::open(folder);
        QFAIL("accepted a broken index");
    } catch (const IoError& e) {
        QVERIFY2(QString::fromStdString(e.what()).contains(message), e.what());
        QVERIFY2(std::string(e.what()).find("safetensors") != std::string::npos, e.what());
    }
}

void TestCheckpoint::duplicateAcrossShards()
{
    QTemporaryDir dir;
    const auto folder = tempPath(dir);
    const auto shard = test::safetensorsImage(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
    test::writeFile(folder / "a.safetensors", shard);
    test::writeFile(folder / "b.safetensors", shard);
    try {
        Checkpoint::open(folder);
        QFAIL("accepted a tensor in two shards");
    } catch (const IoError& e) {
        QCOMPARE(e.kind(), IoErrorKind::DuplicateKey);
        QCOMPARE(e.tensor(), std::string("x"));
    }
    // Through an index: c holds x again besides y.
    test::writeFile(folder / "c.safetensors",
                    test::safetensorsImage(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                           R"("y":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                                           2));
    writeIndex(folder, {{"x", "a.safetensors"}, {"y", "c.safetensors"}});
    try {
        Checkpoint::open(folder);
        QFAIL("accepted a tensor in two indexed shards");
    } catch (const IoError& e) {
        QVERIFY2(std::string(e.what()).find("duplicate across shards") != std::string::npos, e.what());
    }
}

void TestCheckpoint::stagingRefusesInput()
{
    QTemporaryDir dir;
    const auto input = tempPath(dir) / "in";
    fs::create_directories(input);
    QVERIFY_THROWS_EXCEPTION(IoError, StagingDirectory(input, {input}));
    QVERIFY_THROWS_EXCEPTION(IoError, StagingDirectory(input / "sub", {input}));
    QVERIFY_THROWS_EXCEPTION(IoError,
                             StagingDirectory(input / ".." / "in" / "x", {input / "model.safetensors"}));
    StagingDirectory beside(tempPath(dir) / "out", {input});
    QVERIFY(fs::exists(beside.path()));
    QCOMPARE(beside.path().parent_path(), fs::weakly_canonical(tempPath(dir)));
}

void TestCheckpoint::stagingRefusesNonEmptyDestination()
{
    QTemporaryDir dir;
    const auto out = tempPath(dir) / "out";
    test::writeFile(out / "keep.txt", "user data");
    QVERIFY_THROWS_EXCEPTION(IoError, StagingDirectory(out, {}));
    QCOMPARE(test::readFile(out / "keep.txt"), std::string("user data"));
}

void TestCheckpoint::cancelLeavesNothing()
{
    QTemporaryDir dir;
    const auto out = tempPath(dir) / "out";
    try {
        StagingDirectory staging(out, {});
        writeSafetensorsShards(staging.path(), sampleTensors(),
                               {0, [](std::uint64_t done, std::uint64_t) { return done < 1000; }});
        staging.commit();
        QFAIL("cancel was ignored");
    } catch (const IoError& e) {
        QCOMPARE(e.kind(), IoErrorKind::Cancelled);
    }
    QVERIFY(!fs::exists(out));
    QVERIFY(fs::is_empty(tempPath(dir))); // no staging folder left behind
}

void TestCheckpoint::missingPath()
{
    try {
        Checkpoint::open("/nonexistent/draft");
        QFAIL("opened a missing path");
    } catch (const IoError& e) {
        QCOMPARE(e.kind(), IoErrorKind::MissingFile);
        QVERIFY(std::string(e.what()).starts_with("/nonexistent/draft: "));
    }
}

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
