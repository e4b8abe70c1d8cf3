// Reader validation (format-spec §1.3, §8.10) and the reference writer layout (§1.4).
#include "core/io/ioerror.h"
#include "core/io/safetensorsfile.h"
#include "core/io/safetensorsheader.h"
#include "core/io/safetensorslayout.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace spark;

namespace {

std::span<const std::byte> asBytes(const std::string& s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

} // namespace

class TestSafetensors : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void rejectsMalformed_data();
    void rejectsMalformed();
    void acceptsValid_data();
    void acceptsValid();
    void writerHeaderVectors();
    void writerOrdersByDtypeThenName();
    void writtenFileReadsBack();
    void mappedBytesAreViews();
};

void TestSafetensors::rejectsMalformed_data()
{
    QTest::addColumn<QByteArray>("image");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("message");

    auto add = [](const char* name, const std::string& image, IoErrorKind kind, const char* message) {
        QTest::addRow("%s", name) << QByteArray(image.data(), static_cast<qsizetype>(image.size()))
                                  << static_cast<int>(kind) << QString::fromLatin1(message);
    };
    const std::string i32 = R"({"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})";
    add("empty file", "", IoErrorKind::HeaderTooSmall, "too small");
    add("seven bytes", std::string(7, '\0'), IoErrorKind::HeaderTooSmall, "too small");
    add("header too large", std::string("\x3C\x00\x00\x00\x00\xFF\xFF\xFF", 8), IoErrorKind::HeaderTooLarge,
        "exceeds the 100000000-byte limit");
    add("header length past eof", std::string("\x3C\x00\x00\x00\x00\x00\x00\x00", 8),
        IoErrorKind::InvalidHeaderLength, "runs past the end");
    add("not utf-8", test::safetensorsImage("\xff"), IoErrorKind::InvalidHeader, "not valid UTF-8");
    add("truncated json", test::safetensorsImage("{"), IoErrorKind::InvalidHeaderDeserialization,
        "not valid JSON");
    add("not an object", test::safetensorsImage("[]"), IoErrorKind::InvalidHeaderDeserialization,
        "not a JSON object");
    add("unknown dtype",
        test::safetensorsImage(R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", 16),
        IoErrorKind::InvalidHeaderDeserialization, "unknown dtype 'F128'");
    add("negative shape",
        test::safetensorsImage(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
        IoErrorKind::InvalidHeaderDeserialization, "non-negative");
    add("missing shape", test::safetensorsImage(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4),
        IoErrorKind::InvalidHeaderDeserialization, "'shape'");
    add("non-string metadata", test::safetensorsImage(R"({"__metadata__":{"format":1}})"),
        IoErrorKind::InvalidHeaderDeserialization, "is not a string");
    add("duplicate key",
        test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]},)"
                               R"("a":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                               8),
        IoErrorKind::DuplicateKey, "duplicate key 'a'");
    add("gap", test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})", 8),
        IoErrorKind::InvalidOffset, "leaves a gap");
    add("overlap",
        test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                               8),
        IoErrorKind::InvalidOffset, "overlaps");
    add("end before begin",
        test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[0],"data_offsets":[0,0]},)"
                               R"("b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]},)"
                               R"("c":{"dtype":"I32","shape":[1],"data_offsets":[4,0]}})",
                               4),
        IoErrorKind::InvalidOffset, "");
    add("overflow",
        test::safetensorsImage(R"({"a":{"dtype":"F32","shape":[2,18446744073709551614],)"
                               R"("data_offsets":[0,4]}})",
                               4),
        IoErrorKind::ValidationOverflow, "overflows");
    add("misaligned F4",
        test::safetensorsImage(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2),
        IoErrorKind::MisalignedSlice, "do not fill whole bytes");
    add("size mismatch",
        test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,4]}})", 4),
        IoErrorKind::TensorInvalidInfo, "needs 16");
    add("trailing bytes", test::safetensorsImage(i32, 17), IoErrorKind::MetadataIncompleteBuffer,
        "trailing bytes");
    add("truncated data", test::safetensorsImage(i32, 15), IoErrorKind::MetadataIncompleteBuffer,
        "truncated");
}

void TestSafetensors::rejectsMalformed()
{
    QFETCH(QByteArray, image);
    QFETCH(int, kind);
    QFETCH(QString, message);

    const std::string bytes(image.constData(), static_cast<std::size_t>(image.size()));
    // The same checks must hold for an in-memory image and for a file on disk.
    try {
        parseSafetensorsImage(asBytes(bytes), "mem.safetensors");
        QFAIL("accepted a malformed image");
    } catch (const IoError& e) {
        QCOMPARE(ioErrorKindName(e.kind()), ioErrorKindName(static_cast<IoErrorKind>(kind)));
        QVERIFY2(QString::fromStdString(e.what()).contains(message), e.what());
        QVERIFY2(std::string(e.what()).starts_with("mem.safetensors: "), e.what());
    }
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "bad.safetensors";
    test::writeFile(path, bytes);
    try {
        SafetensorsFile::open(path);
        QFAIL("opened a malformed file");
    } catch (const IoError& e) {
        QCOMPARE(static_cast<int>(e.kind()), kind);
        QCOMPARE(e.file(), path.string());
    }
}

void TestSafetensors::acceptsValid_data()
{
    QTest::addColumn<QByteArray>("image");
    QTest::addColumn<int>("tensorCount");
    auto add = [](const char* name, const std::string& image, int count) {
        QTest::addRow("%s", name) << QByteArray(image.data(), static_cast<qsizetype>(image.size())) << count;
    };
    add("exact I32",
        test::safetensorsImage(R"({"a":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})", 16), 1);
    add("0-rank scalar",
        test::safetensorsImage(R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}})", 8), 1);
    add("zero-size",
        test::safetensorsImage(R"({"z":{"dtype":"BF16","shape":[0,4],"data_offsets":[0,0]},)"
                               R"("a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})",
                               3),
        2);
    add("F4 pair", test::safetensorsImage(R"({"f":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", 2), 1);
    add("F6 four", test::safetensorsImage(R"({"f":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}})", 3),
        1);
    add("whitespace padded", test::safetensorsImage("  {\"__metadata__\":{\"format\":\"pt\"}}   "), 0);
    add("unsorted offsets",
        test::safetensorsImage(R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                               R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                               2),
        2);
}

void TestSafetensors::acceptsValid()
{
    QFETCH(QByteArray, image);
    QFETCH(int, tensorCount);
    const std::string bytes(image.constData(), static_cast<std::size_t>(image.size()));
    const auto header = parseSafetensorsImage(asBytes(bytes), "ok.safetensors");
    QCOMPARE(static_cast<int>(header.tensors.size()), tensorCount);
}

void TestSafetensors::writerHeaderVectors()
{
    // format-spec §1.4 / §8.10: 65-byte header padded to N=72; metadata-only header N=40.
    const auto single = layoutSafetensors({{"attn0", DType::F32, {1, 1, 2, 3}}}, {});
    QCOMPARE(single.header.size(), std::size_t{72});
    QCOMPARE(QByteArray::fromStdString(single.header.substr(0, 65)),
             QByteArray(R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})"));
    QCOMPARE(single.header.substr(65), std::string(7, ' '));
    QCOMPARE(single.fileSize() - single.dataBytes, std::uint64_t{80});

    const auto metadataOnly = layoutSafetensors({}, {{"framework", "pt"}});
    QCOMPARE(metadataOnly.header.size(), std::size_t{40});
    QVERIFY(metadataOnly.header.starts_with(R"({"__metadata__":{"framework":"pt"}})"));
}

void TestSafetensors::writerOrdersByDtypeThenName()
{
    const auto layout = layoutSafetensors({{"b", DType::BF16, {2}},
                                           {"a", DType::BF16, {2}},
                                           {"shape", DType::I64, {2}},
                                           {"packed", DType::I32, {4}},
                                           {"mask", DType::Bool, {3}}});
    QStringList order;
    for (const auto& t : layout.tensors) {
        order << QString::fromStdString(t.name);
    }
    QCOMPARE(order, (QStringList{QStringLiteral("shape"), QStringLiteral("packed"), QStringLiteral("a"),
                                 QStringLiteral("b"), QStringLiteral("mask")}));
    // Every offset is a multiple of its element size.
    for (const auto& t : layout.tensors) {
        QCOMPARE(t.begin % static_cast<std::uint64_t>(std::max(1, dtypeBits(t.dtype) / 8)), std::uint64_t{0});
    }
    QVERIFY(layout.header.starts_with(R"({"__metadata__":{"format":"pt"},"shape":)"));
    QCOMPARE(layout.header.size() % 8, std::size_t{0});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             layoutSafetensors({{"x", DType::U8, {1}}, {"x", DType::U8, {1}}}));
}

void TestSafetensors::writtenFileReadsBack()
{
    const auto layout = layoutSafetensors({{"w", DType::BF16, {2, 2}}, {"n", DType::I64, {1}}});
    std::string image(8, '\0');
    for (int i = 0; i < 8; ++i) {
        image[static_cast<std::size_t>(i)] = static_cast<char>((layout.header.size() >> (8 * i)) & 0xFF);
    }
    image += layout.header + std::string(layout.dataBytes, '\x5A');
    const auto header = parseSafetensorsImage(asBytes(image), "rt.safetensors");
    QCOMPARE(header.metadata.at("format"), std::string("pt"));
    QCOMPARE(header.tensors.size(), std::size_t{2});
    QCOMPARE(header.tensors[0].name, std::string("n"));
    QCOMPARE(header.tensors[1].shape, (std::vector<std::uint64_t>{2, 2}));
}

void TestSafetensors::mappedBytesAreViews()
{
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "v.safetensors";
    std::string image = test::safetensorsImage(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})");
    image += "\x01\x02\x03\x04";
    test::writeFile(path, image);
    const auto file = SafetensorsFile::open(path);
    const auto* tensor = file->find("a");
    QVERIFY(tensor);
    const auto view = file->bytes(*tensor);
    QCOMPARE(view.size(), std::size_t{4});
    QCOMPARE(static_cast<int>(view[3]), 4);
    std::byte chunk[2];
    file->read(*tensor, 1, chunk);
    QCOMPARE(static_cast<int>(chunk[0]), 2);
    QVERIFY_THROWS_EXCEPTION(IoError, file->read(*tensor, 3, chunk));
    QVERIFY(file->find("missing") == nullptr);
}

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
