#pragma once

#include "core/io/checkpoint.h"
#include "core/quant/quantbackend.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"

#include <string>
#include <vector>

namespace spark {

/// @brief The bit-exactness check behind `verify` and `compare`: a quantized module's source weight is
/// re-encoded block by block under its scheme, rounding and context, exactly as the exporter encodes it,
/// and every tensor the module stores is compared byte for byte with the fresh encoding.
class ReencodeCheck
{
  public:
    enum class State {
        Matching,   ///< every byte so far equals the fresh encoding
        Differs,    ///< a stored tensor has another dtype, shape or bytes (problem() says which)
        NotChecked, ///< the source cannot be encoded (a NaN/Inf weight: problem() names it)
    };

    /// @brief Checks the dtypes, shapes and constant tensors (NVFP4's global scale) of the tensors
    /// @p module + "." + suffix in @p output for a source @p weight. @p skipCodes leaves the codes unchecked
    /// (GPTQ solved them from a capture: only the scales are recomputable).
    ReencodeCheck(const Checkpoint& output, std::string module, const WeightScheme& scheme,
                  const RoundingMethod& rounding, const TensorInfo& weight, SchemeContext context,
                  bool skipCodes = false);

    /// @brief Encodes @p rows (a block of the source weight) and compares the rows they cover.
    void block(const WeightRows& rows, const QuantBackend& backend, unsigned threads);

    State state() const { return m_state; }
    bool matching() const { return m_state == State::Matching; }
    const std::string& problem() const { return m_problem; }

  private:
    void differs(const std::string& why);
    std::string fresh() const;

    const Checkpoint& m_output;
    std::string m_module;
    const WeightScheme& m_scheme;
    const RoundingMethod& m_rounding;
    SchemeContext m_context;
    bool m_skipCodes;
    std::vector<EncodedTensor> m_tensors;
    std::vector<const CheckpointTensor*> m_written;
    std::vector<std::vector<std::byte>> m_parts;
    std::vector<std::byte> m_stored;
    State m_state = State::Matching;
    std::string m_problem;
};

} // namespace spark
