#pragma once

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief What a tensor is to the loader, guessed from its name and shape alone. The plan layer's
/// module description (vLLM classes, fused groups) is authoritative once it exists; this guess only
/// has to be good enough to read a checkpoint before a plan is made.
enum class TensorRole { Linear, Norm, Embedding, Head, Buffer };

/// @brief embedding: embed_tokens; head: lm_head or a "*_head" component; linear: 2-D *.weight;
/// norm: 1-D *.weight; buffer: everything else (biases, d2t, masks).
TensorRole guessTensorRole(const std::string& name, const std::vector<std::uint64_t>& shape);

/// @brief "linear", "norm", "embedding", "head", "buffer" (the spelling the CLI and plan files use).
QString tensorRoleName(TensorRole role);

} // namespace spark
