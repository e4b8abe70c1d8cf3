#pragma once

#include <filesystem>
#include <functional>
#include <vector>

namespace spark {

/// @brief An output folder that appears whole or not at all. Work is written into a hidden folder
/// beside the destination; commit() fsyncs and renames it into place. Destroying an uncommitted
/// staging folder (error, cancel) removes it, so a failed export leaves nothing behind.
class StagingDirectory
{
  public:
    /// @brief Refuses (IoError) a destination that exists and is not an empty folder, or that is, or
    /// lies inside, any of @p protectedInputs (the source checkpoint is never written to).
    StagingDirectory(std::filesystem::path destination,
                     const std::vector<std::filesystem::path>& protectedInputs);
    ~StagingDirectory();
    StagingDirectory(const StagingDirectory&) = delete;
    StagingDirectory& operator=(const StagingDirectory&) = delete;

    const std::filesystem::path& path() const { return m_staging; }
    const std::filesystem::path& destination() const { return m_destination; }
    /// @brief fsyncs everything staged, then, unless @p stillWanted returns false (IoError Cancelled:
    /// the staging folder is removed as usual), renames it into place. Throws IoError when a flush or
    /// the rename fails.
    void commit(const std::function<bool()>& stillWanted = {});

  private:
    std::filesystem::path m_destination;
    std::filesystem::path m_staging;
    bool m_committed = false;
};

/// @brief True when @p inner is @p outer or lies inside it (after resolving links and "..").
bool isSameOrInside(const std::filesystem::path& inner, const std::filesystem::path& outer);

} // namespace spark
