#pragma once

#include <stdexcept>
#include <string>

namespace spark {

/// @brief Why a checkpoint could not be read or written. The first ten mirror the reference
/// safetensors reader's errors (format-spec §1.3) so that messages can be compared with it.
enum class IoErrorKind {
    HeaderTooSmall,
    HeaderTooLarge,
    InvalidHeaderLength,
    InvalidHeader,
    InvalidHeaderDeserialization,
    InvalidOffset,
    ValidationOverflow,
    MisalignedSlice,
    TensorInvalidInfo,
    MetadataIncompleteBuffer,
    DuplicateKey,
    InvalidIndex,
    MissingFile,
    FileSystem,
    WriteFailed,
    Cancelled,
};

/// @brief A short stable name of the kind, e.g. "InvalidOffset".
const char* ioErrorKindName(IoErrorKind kind);

/// @brief An I/O failure that names the file and, where one is concerned, the tensor.
/// what() is a complete one-line message: "<file>: <problem> [tensor '<name>']".
class IoError : public std::runtime_error
{
  public:
    IoError(IoErrorKind kind, std::string file, std::string message, std::string tensor = {});

    IoErrorKind kind() const { return m_kind; }
    const std::string& file() const { return m_file; }
    const std::string& tensor() const { return m_tensor; }
    const std::string& problem() const { return m_problem; }

  private:
    IoErrorKind m_kind;
    std::string m_file;
    std::string m_tensor;
    std::string m_problem;
};

} // namespace spark
