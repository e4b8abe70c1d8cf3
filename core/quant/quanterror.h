#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace spark {

/// @brief Why a weight could not be quantized.
enum class QuantErrorKind {
    InvalidScheme,    ///< bits/group outside what compressed-tensors + vLLM support
    UnsupportedDType, ///< source dtype other than BF16/F16/F32
    BadShape,         ///< not 2-D, or columns not divisible by the group size
    NonFinite,        ///< NaN or Inf in the weight: quantizing it would give a silent garbage number
    StoredMismatch,   ///< a stored scale that the recorded rounding method cannot have chosen
};

/// @brief A quantization failure naming the tensor and, for NaN/Inf, the first bad flat index
/// (row * cols + col within the whole tensor). what() is one complete line.
class QuantError : public std::runtime_error
{
  public:
    QuantError(QuantErrorKind kind, std::string message, std::string tensor = {},
               std::optional<std::uint64_t> index = std::nullopt);

    QuantErrorKind kind() const { return m_kind; }
    const std::string& tensor() const { return m_tensor; }
    /// First non-finite flat index (NonFinite only).
    std::optional<std::uint64_t> index() const { return m_index; }
    const std::string& problem() const { return m_problem; }

  private:
    QuantErrorKind m_kind;
    std::string m_tensor;
    std::optional<std::uint64_t> m_index;
    std::string m_problem;
};

} // namespace spark
