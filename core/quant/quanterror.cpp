#include "core/quant/quanterror.h"

namespace spark {

namespace {

std::string compose(const std::string& message, const std::string& tensor)
{
    return tensor.empty() ? message : "tensor '" + tensor + "': " + message;
}

} // namespace

QuantError::QuantError(QuantErrorKind kind, std::string message, std::string tensor,
                       std::optional<std::uint64_t> index)
    : std::runtime_error(compose(message, tensor)), m_kind(kind), m_tensor(std::move(tensor)), m_index(index),
      m_problem(std::move(message))
{
}

} // namespace spark
