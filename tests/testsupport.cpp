#include "testsupport.h"

#include <QProcess>
#include <QStringList>
#include <fstream>
#include <sstream>

namespace spark::test {

std::filesystem::path dataPath(const std::string& name)
{
    return std::filesystem::path(SPARK_TEST_DATA) / name;
}

std::string safetensorsImage(const std::string& header, std::size_t dataBytes)
{
    std::string image(8, '\0');
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) {
        image[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
    }
    return image + header + std::string(dataBytes, '\0');
}

void writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path());
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

CliResult runCli(const std::vector<std::string>& args, int timeoutMs)
{
    QProcess process;
    QStringList list;
    for (const auto& a : args) {
        list << QString::fromStdString(a);
    }
    process.start(QStringLiteral(SPARK_CLI_PATH), list);
    CliResult result;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        result.err = "timed out";
        return result;
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.out = process.readAllStandardOutput().toStdString();
    result.err = process.readAllStandardError().toStdString();
    return result;
}

} // namespace spark::test
