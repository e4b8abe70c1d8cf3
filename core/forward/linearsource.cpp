#include "core/forward/linearsource.h"

#include "core/audit/moduledecoder.h"
#include "core/forward/bf16kernel.h"
#include "core/io/floatconv.h"
#include "core/quant/quantbackend.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>

namespace spark {
namespace {

class StoredLinear final : public LinearSource
{
  public:
    StoredLinear(std::shared_ptr<const Checkpoint> checkpoint, const CheckpointTensor& tensor)
        : m_checkpoint(std::move(checkpoint)), m_tensor(tensor)
    {
        if (tensor.info.shape.size() != 2 || !canConvertToFloat(tensor.info.dtype)) {
            throw std::invalid_argument(m_checkpoint->fileNameOf(tensor) + ": tensor '" + tensor.info.name +
                                        "' is not a 2-D float weight");
        }
    }
    std::int64_t rows() const override { return static_cast<std::int64_t>(m_tensor.info.shape[0]); }
    std::int64_t cols() const override { return static_cast<std::int64_t>(m_tensor.info.shape[1]); }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        const auto bytes = m_checkpoint->bytes(m_tensor);
        const std::size_t elementBytes = static_cast<std::size_t>(dtypeBits(m_tensor.info.dtype)) / 8;
        const auto offset =
            static_cast<std::size_t>(firstRow) * static_cast<std::size_t>(cols()) * elementBytes;
        toFloat(m_tensor.info.dtype, bytes.data() + offset, rowCount * static_cast<std::size_t>(cols()), out);
    }
    const std::uint16_t* storedBf16(std::int64_t firstRow) const override
    {
        if (m_tensor.info.dtype != DType::BF16) {
            return nullptr;
        }
        // The checkpoint's bytes are mapped. safetensors aligns no tensor (the kernels load unaligned
        // vectors), and a tensor at an odd address is left to decodeBf16().
        const auto bytes = m_checkpoint->bytes(m_tensor);
        if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::uint16_t) != 0) {
            return nullptr;
        }
        return reinterpret_cast<const std::uint16_t*>(bytes.data()) + firstRow * cols();
    }
    std::string describe() const override
    {
        return m_tensor.info.name + " (" + std::string(dtypeName(m_tensor.info.dtype)) + ")";
    }

  private:
    std::shared_ptr<const Checkpoint> m_checkpoint;
    CheckpointTensor m_tensor;
};

class PlanQuantizedLinear final : public LinearSource
{
  public:
    PlanQuantizedLinear(std::shared_ptr<const Checkpoint> checkpoint, const CheckpointTensor& tensor,
                        const WeightScheme& scheme, SchemeContext context)
        : m_checkpoint(std::move(checkpoint)), m_tensor(tensor), m_scheme(scheme), m_context(context)
    {
        const auto& info = tensor.info;
        m_tensors = scheme.codec()->tensors(info.shape[0], info.shape[1], info.dtype);
        m_constants.resize(m_tensors.size());
        for (std::size_t i = 0; i < m_tensors.size(); ++i) {
            if (m_tensors[i].rowsPerEntry == 0) {
                m_constants[i] =
                    scheme.codec()->constantBytes(m_tensors[i], info.shape[0], info.shape[1], context);
            }
        }
    }
    std::int64_t rows() const override { return static_cast<std::int64_t>(m_tensor.info.shape[0]); }
    std::int64_t cols() const override { return static_cast<std::int64_t>(m_tensor.info.shape[1]); }
    std::size_t rowAlignment() const override { return m_scheme.codec()->rowAlignment(); }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        const auto bytes = m_checkpoint->bytes(m_tensor);
        WeightRows rows;
        rows.dtype = m_tensor.info.dtype;
        rows.cols = static_cast<std::size_t>(cols());
        rows.rowCount = rowCount;
        rows.firstRow = static_cast<std::uint64_t>(firstRow);
        rows.data = bytes.data() + static_cast<std::size_t>(firstRow) * rows.cols * rows.elementBytes();
        rows.tensor = m_tensor.info.name;
        std::vector<std::vector<std::byte>> parts;
        m_scheme.codec()->encode(rows, m_context, parts, cpuBackend(), 1);
        std::vector<std::span<const std::byte>> views;
        for (std::size_t i = 0; i < m_tensors.size(); ++i) {
            views.emplace_back(m_tensors[i].rowsPerEntry == 0 ? std::span<const std::byte>(m_constants[i])
                                                              : std::span<const std::byte>(parts[i]));
        }
        m_scheme.codec()->decode(views, rows.dtype, rowCount, rows.cols, out);
    }
    InputQuantization inputQuantization() const override { return inputQuantizationOf(m_scheme); }
    std::string describe() const override
    {
        return m_tensor.info.name + " (" + std::string(m_scheme.name) + ", in memory)";
    }

  private:
    std::shared_ptr<const Checkpoint> m_checkpoint;
    CheckpointTensor m_tensor;
    const WeightScheme& m_scheme;
    SchemeContext m_context;
    std::vector<EncodedTensor> m_tensors;
    std::vector<std::vector<std::byte>> m_constants;
};

class DecodedLinear final : public LinearSource
{
  public:
    DecodedLinear(std::shared_ptr<const Checkpoint> checkpoint, std::shared_ptr<const ModuleDecoder> decoder,
                  std::string name)
        : m_checkpoint(std::move(checkpoint)), m_decoder(std::move(decoder)), m_name(std::move(name))
    {
    }
    std::int64_t rows() const override { return static_cast<std::int64_t>(m_decoder->rows()); }
    std::int64_t cols() const override { return static_cast<std::int64_t>(m_decoder->cols()); }
    std::size_t rowAlignment() const override { return m_decoder->rowAlignment(); }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        m_decoder->decode(static_cast<std::uint64_t>(firstRow), rowCount, out);
    }
    InputQuantization inputQuantization() const override
    {
        if (m_decoder->args().scheme) {
            return inputQuantizationOf(*m_decoder->args().scheme);
        }
        if (m_decoder->args().inputActivations) {
            throw std::invalid_argument(m_name + ": input_activations of " + m_decoder->args().describe() +
                                        " cannot be reproduced by the forward");
        }
        return InputQuantization::None;
    }
    std::string describe() const override { return m_name + " (dequantized from the checkpoint)"; }

  private:
    std::shared_ptr<const Checkpoint> m_checkpoint; // keeps the decoder's checkpoint alive
    std::shared_ptr<const ModuleDecoder> m_decoder;
    std::string m_name;
};

class RowSlice final : public LinearSource
{
  public:
    RowSlice(std::shared_ptr<const LinearSource> source, std::int64_t offset, std::int64_t count)
        : m_source(std::move(source)), m_offset(offset), m_count(count)
    {
        if (offset < 0 || count <= 0 || offset + count > m_source->rows() ||
            offset % static_cast<std::int64_t>(m_source->rowAlignment()) != 0) {
            throw std::invalid_argument(m_source->describe() + ": rows " + std::to_string(offset) + ".." +
                                        std::to_string(offset + count) + " do not fit its " +
                                        std::to_string(m_source->rows()) + " rows");
        }
    }
    std::int64_t rows() const override { return m_count; }
    std::int64_t cols() const override { return m_source->cols(); }
    std::size_t rowAlignment() const override { return m_source->rowAlignment(); }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        m_source->decode(m_offset + firstRow, rowCount, out);
    }
    void decodeBf16(std::int64_t firstRow, std::size_t rowCount, std::uint16_t* out) const override
    {
        m_source->decodeBf16(m_offset + firstRow, rowCount, out);
    }
    const std::uint16_t* storedBf16(std::int64_t firstRow) const override
    {
        return m_source->storedBf16(m_offset + firstRow);
    }
    InputQuantization inputQuantization() const override { return m_source->inputQuantization(); }
    std::string describe() const override { return m_source->describe(); }

  private:
    std::shared_ptr<const LinearSource> m_source;
    std::int64_t m_offset, m_count;
};

/// A weight decoded once, on first use, and served from memory afterwards: a replayed loop runs the forward
/// for one anchor at a time, thousands of times, and would quantize or dequantize the weight anew each time.
class MemoizedLinear final : public LinearSource
{
  public:
    explicit MemoizedLinear(std::shared_ptr<const LinearSource> source) : m_source(std::move(source)) {}
    std::int64_t rows() const override { return m_source->rows(); }
    std::int64_t cols() const override { return m_source->cols(); }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        std::call_once(m_once, [this] {
            m_values.resize(static_cast<std::size_t>(rows() * cols()));
            m_source->decode(0, static_cast<std::size_t>(rows()), m_values.data());
        });
        std::copy_n(m_values.data() + firstRow * cols(), rowCount * static_cast<std::size_t>(cols()), out);
    }
    InputQuantization inputQuantization() const override { return m_source->inputQuantization(); }
    std::string describe() const override { return m_source->describe(); }

  private:
    std::shared_ptr<const LinearSource> m_source;
    mutable std::once_flag m_once;
    mutable std::vector<float> m_values;
};

} // namespace

std::shared_ptr<const LinearSource> memoized(std::shared_ptr<const LinearSource> source)
{
    return std::make_shared<MemoizedLinear>(std::move(source));
}

void LinearSource::decodeBf16(std::int64_t firstRow, std::size_t rowCount, std::uint16_t* out) const
{
    thread_local std::vector<float> values; // a tile per call: no allocation per call
    values.resize(rowCount * static_cast<std::size_t>(cols()));
    decode(firstRow, rowCount, values.data());
    kernels::toBf16(values.data(), values.size(), out);
}

void LinearSource::decodeRow(std::int64_t row, float* out) const
{
    const auto align = static_cast<std::int64_t>(rowAlignment());
    if (align == 1) {
        decode(row, 1, out);
        return;
    }
    const std::int64_t first = row / align * align;
    const auto count = static_cast<std::size_t>(std::min(align, rows() - first));
    std::vector<float> block(count * static_cast<std::size_t>(cols()));
    decode(first, count, block.data());
    std::copy_n(block.data() + (row - first) * cols(), cols(), out);
}

std::shared_ptr<const LinearSource> storedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                 const CheckpointTensor& tensor)
{
    return std::make_shared<StoredLinear>(std::move(checkpoint), tensor);
}

std::shared_ptr<const LinearSource> planQuantizedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                        const CheckpointTensor& tensor,
                                                        const WeightScheme& scheme, SchemeContext context)
{
    return std::make_shared<PlanQuantizedLinear>(std::move(checkpoint), tensor, scheme, context);
}

std::shared_ptr<const LinearSource> decodedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                  std::shared_ptr<const ModuleDecoder> decoder,
                                                  std::string name)
{
    return std::make_shared<DecodedLinear>(std::move(checkpoint), std::move(decoder), std::move(name));
}

std::shared_ptr<const LinearSource> rowSlice(std::shared_ptr<const LinearSource> source, std::int64_t offset,
                                             std::int64_t count)
{
    return std::make_shared<RowSlice>(std::move(source), offset, count);
}

} // namespace spark
