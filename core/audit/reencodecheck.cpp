#include "core/audit/reencodecheck.h"

#include "core/quant/quanterror.h"

#include <algorithm>

namespace spark {

ReencodeCheck::ReencodeCheck(const Checkpoint& output, std::string module, const WeightScheme& scheme,
                             const RoundingMethod& rounding, const TensorInfo& weight, SchemeContext context,
                             bool skipCodes)
    : m_output(output), m_module(std::move(module)), m_scheme(scheme), m_rounding(rounding),
      m_context(std::move(context)), m_skipCodes(skipCodes)
{
    const auto& codec = *scheme.codec();
    m_tensors = codec.tensors(weight.shape[0], weight.shape[1], weight.dtype);
    for (const auto& t : m_tensors) {
        const auto* written = output.find(m_module + "." + t.suffix);
        if (!written || written->info.dtype != t.dtype || written->info.shape != t.shape) {
            differs(t.suffix + (written ? " is " + std::string(dtypeName(written->info.dtype)) + " " +
                                              written->info.shapeText() + ", " + fresh() + " of the " +
                                              std::string(dtypeName(weight.dtype)) +
                                              " source writes another dtype or shape"
                                        : " is missing"));
            return;
        }
        m_written.push_back(written);
        if (t.rowsPerEntry == 0) {
            const auto expected = codec.constantBytes(t, weight.shape[0], weight.shape[1], m_context);
            const auto bytes = output.bytes(*written);
            if (!std::equal(bytes.begin(), bytes.end(), expected.begin(), expected.end())) {
                differs(t.suffix + " differs from " + fresh() + " of the source");
                return;
            }
        }
    }
}

void ReencodeCheck::block(const WeightRows& rows, const QuantBackend& backend, unsigned threads)
{
    if (m_state != State::Matching) {
        return;
    }
    try {
        m_scheme.codec()->encode(rows, m_context, m_parts, backend, threads);
    } catch (const QuantError& e) {
        m_state = State::NotChecked;
        m_problem = e.what();
        return;
    }
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
        if (m_tensors[i].rowsPerEntry == 0 || (m_skipCodes && i == 0)) {
            continue;
        }
        const auto [offset, size] = m_tensors[i].rowRange(rows.firstRow, rows.rowCount);
        m_stored.resize(static_cast<std::size_t>(size));
        m_output.fileOf(*m_written[i])
            .read(m_written[i]->info, offset, std::span(m_stored.data(), m_stored.size()));
        if (m_stored != m_parts[i]) {
            differs(m_tensors[i].suffix + " differs from " + fresh() + " of the source (rows from " +
                    std::to_string(rows.firstRow) + ")");
            return;
        }
    }
}

void ReencodeCheck::differs(const std::string& why)
{
    m_state = State::Differs;
    m_problem = why;
}

std::string ReencodeCheck::fresh() const
{
    return "a fresh " + std::string(m_scheme.name) + " quantization (" + std::string(m_rounding.name) +
           " rounding)";
}

} // namespace spark
