#include "core/quant/analyzer.h"

#include "core/io/ioerror.h"
#include "core/quant/quanterror.h"

#include <algorithm>

namespace spark {

bool isAnalyzable(const TensorInfo& tensor, const QuantScheme& scheme)
{
    const std::string_view name = tensor.name;
    return tensor.shape.size() == 2 && name.ends_with(".weight") && isQuantizableFloat(tensor.dtype) &&
           tensor.shape[0] > 0 && scheme.dividesColumns(static_cast<std::size_t>(tensor.shape[1]));
}

TensorErrorStats analyzeTensor(const SafetensorsFile& file, const TensorInfo& tensor,
                               const AnalyzeOptions& options, std::vector<std::byte>& buffer,
                               const ProgressFn& progress)
{
    const auto rows = tensor.shape[0];
    const auto cols = static_cast<std::size_t>(tensor.shape[1]);
    const std::size_t rowBytes = cols * (tensor.dtype == DType::F32 ? 4 : 2);
    const std::size_t blockRows = std::max<std::size_t>(1, options.chunkBytes / rowBytes);
    ErrorStatsAccumulator acc(options.scheme, rows, cols);
    for (std::uint64_t first = 0; first < rows; first += blockRows) {
        const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(blockRows, rows - first));
        if (buffer.size() < count * rowBytes) {
            buffer.resize(count * rowBytes);
        }
        file.read(tensor, first * rowBytes, std::span(buffer.data(), count * rowBytes));
        WeightRows block{tensor.dtype, buffer.data(), count, cols, first, tensor.name};
        acc.addRows(block, options.threads, options.backend);
        if (!reportProgress(progress, (first + count) * rowBytes, tensor.byteSize())) {
            throw IoError(IoErrorKind::Cancelled, file.path().string(), "cancelled", tensor.name);
        }
    }
    return acc.result();
}

std::vector<TensorAnalysis> analyzeCheckpoint(const Checkpoint& checkpoint, const AnalyzeOptions& options,
                                              const ProgressFn& progress)
{
    options.scheme.validate();
    std::uint64_t total = 0;
    for (const auto& t : checkpoint.tensors()) {
        total += isAnalyzable(t.info, options.scheme) ? t.info.byteSize() : 0;
    }
    std::vector<TensorAnalysis> out;
    std::vector<std::byte> buffer;
    std::uint64_t done = 0;
    for (const auto& t : checkpoint.tensors()) {
        if (!isAnalyzable(t.info, options.scheme)) {
            continue;
        }
        TensorAnalysis a{t.info.name, checkpoint.fileNameOf(t), t.info.dtype, t.info.shape, std::nullopt, {}};
        const auto base = done;
        const ProgressFn tensorProgress = [&](std::uint64_t bytes, std::uint64_t) {
            return reportProgress(progress, base + bytes, total);
        };
        try {
            a.stats = analyzeTensor(checkpoint.fileOf(t), t.info, options, buffer, tensorProgress);
        } catch (const QuantError& e) {
            a.error = checkpoint.fileOf(t).path().string() + ": " + e.what();
        }
        done += t.info.byteSize();
        out.push_back(std::move(a));
    }
    reportProgress(progress, total, total);
    return out;
}

} // namespace spark
