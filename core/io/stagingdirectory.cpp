#include "core/io/stagingdirectory.h"

#include "core/io/ioerror.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <unistd.h>

namespace spark {
namespace fs = std::filesystem;

namespace {

/// fsync of @p path; 0 or the errno of the failure.
int fsyncPath(const fs::path& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    const int err = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return err;
}

/// A staged file or folder that cannot be flushed is an error: on some filesystems (NFS, thin
/// provisioning) a full disk or an I/O error only surfaces here. EINVAL means the filesystem has
/// nothing to flush for it.
void flushOrThrow(const fs::path& path)
{
    const int err = fsyncPath(path);
    if (err != 0 && err != EINVAL) {
        throw IoError(IoErrorKind::WriteFailed, path.string(),
                      std::string("cannot flush to disk: ") + std::strerror(err));
    }
}

} // namespace

bool isSameOrInside(const fs::path& inner, const fs::path& outer)
{
    std::error_code ec;
    const auto a = fs::weakly_canonical(fs::absolute(inner), ec);
    const auto b = fs::weakly_canonical(fs::absolute(outer), ec);
    auto ai = a.begin();
    for (auto bi = b.begin(); bi != b.end(); ++bi, ++ai) {
        if (bi->empty()) {
            continue; // trailing separator
        }
        if (ai == a.end() || *ai != *bi) {
            return false;
        }
    }
    return true;
}

StagingDirectory::StagingDirectory(fs::path destination, const std::vector<fs::path>& protectedInputs)
    : m_destination(fs::absolute(std::move(destination)).lexically_normal())
{
    if (m_destination.filename().empty()) {
        m_destination = m_destination.parent_path();
    }
    const std::string label = m_destination.string();
    for (const auto& input : protectedInputs) {
        const auto inputFolder = fs::is_directory(input) ? input : input.parent_path();
        if (isSameOrInside(m_destination, inputFolder)) {
            throw IoError(IoErrorKind::FileSystem, label,
                          "output folder is, or is inside, the input '" + inputFolder.string() +
                              "'; the source checkpoint is never written to");
        }
    }
    std::error_code ec;
    if (fs::exists(m_destination, ec)) {
        if (!fs::is_directory(m_destination, ec) || !fs::is_empty(m_destination, ec)) {
            throw IoError(IoErrorKind::FileSystem, label, "output already exists and is not an empty folder");
        }
    }
    const auto parent = m_destination.parent_path();
    // Like `mkdir -p` for the folders above the output; the output itself appears only on commit.
    if (!fs::is_directory(parent, ec) && !fs::create_directories(parent, ec)) {
        throw IoError(IoErrorKind::FileSystem, label,
                      "cannot create the parent folder '" + parent.string() + "': " + ec.message());
    }
    std::random_device random;
    for (int attempt = 0; attempt < 16 && m_staging.empty(); ++attempt) {
        auto candidate =
            parent / ("." + m_destination.filename().string() + ".partial-" + std::to_string(random()));
        if (fs::create_directory(candidate, ec)) {
            m_staging = candidate;
        }
    }
    if (m_staging.empty()) {
        throw IoError(IoErrorKind::WriteFailed, parent.string(),
                      "cannot create a staging folder: " + ec.message());
    }
}

StagingDirectory::~StagingDirectory()
{
    if (!m_committed && !m_staging.empty()) {
        std::error_code ec;
        fs::remove_all(m_staging, ec);
    }
}

void StagingDirectory::commit(const std::function<bool()>& stillWanted)
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_staging, ec)) {
        flushOrThrow(entry.path());
    }
    if (ec) {
        throw IoError(IoErrorKind::WriteFailed, m_staging.string(),
                      "cannot list the staging folder: " + ec.message());
    }
    flushOrThrow(m_staging);
    // Flushing a large output takes a while: a cancel that arrives meanwhile still wins.
    if (stillWanted && !stillWanted()) {
        throw IoError(IoErrorKind::Cancelled, m_destination.string(), "cancelled");
    }
    if (fs::exists(m_destination, ec)) {
        fs::remove(m_destination, ec); // an empty folder (checked in the constructor)
    }
    if (::rename(m_staging.c_str(), m_destination.c_str()) != 0) {
        throw IoError(IoErrorKind::WriteFailed, m_destination.string(),
                      std::string("cannot move the finished output into place: ") + std::strerror(errno));
    }
    m_committed = true;
    // The output is in place; making the rename itself durable is best effort.
    fsyncPath(m_destination.parent_path());
}

} // namespace spark
