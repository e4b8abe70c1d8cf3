#include "core/io/ioerror.h"

namespace spark {
namespace {

std::string composeMessage(const std::string& file, const std::string& message, const std::string& tensor)
{
    std::string text = file.empty() ? message : file + ": " + message;
    if (!tensor.empty()) {
        text += " (tensor '" + tensor + "')";
    }
    return text;
}

} // namespace

const char* ioErrorKindName(IoErrorKind kind)
{
    switch (kind) {
    case IoErrorKind::HeaderTooSmall:
        return "HeaderTooSmall";
    case IoErrorKind::HeaderTooLarge:
        return "HeaderTooLarge";
    case IoErrorKind::InvalidHeaderLength:
        return "InvalidHeaderLength";
    case IoErrorKind::InvalidHeader:
        return "InvalidHeader";
    case IoErrorKind::InvalidHeaderDeserialization:
        return "InvalidHeaderDeserialization";
    case IoErrorKind::InvalidOffset:
        return "InvalidOffset";
    case IoErrorKind::ValidationOverflow:
        return "ValidationOverflow";
    case IoErrorKind::MisalignedSlice:
        return "MisalignedSlice";
    case IoErrorKind::TensorInvalidInfo:
        return "TensorInvalidInfo";
    case IoErrorKind::MetadataIncompleteBuffer:
        return "MetadataIncompleteBuffer";
    case IoErrorKind::DuplicateKey:
        return "DuplicateKey";
    case IoErrorKind::InvalidIndex:
        return "InvalidIndex";
    case IoErrorKind::MissingFile:
        return "MissingFile";
    case IoErrorKind::FileSystem:
        return "FileSystem";
    case IoErrorKind::WriteFailed:
        return "WriteFailed";
    case IoErrorKind::Cancelled:
        return "Cancelled";
    }
    return "Unknown";
}

IoError::IoError(IoErrorKind kind, std::string file, std::string message, std::string tensor)
    : std::runtime_error(composeMessage(file, message, tensor)), m_kind(kind), m_file(std::move(file)),
      m_tensor(std::move(tensor)), m_problem(std::move(message))
{
}

} // namespace spark
