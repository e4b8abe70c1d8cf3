#include "core/forward/blocks.h"

#include "core/forward/attentionkernel.h"
#include "core/forward/gemm.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

namespace spark {
namespace {

/// Rows per weight tile: about 1 MiB of FP32 (stays in L2 while the GEMM walks the activations), a
/// multiple of the source's row alignment and of @p granularity.
std::int64_t tileRows(const LinearSource& weight, std::int64_t granularity = 1)
{
    const auto align = std::lcm(static_cast<std::int64_t>(weight.rowAlignment()), granularity);
    std::int64_t rows =
        std::max<std::int64_t>(16, (std::int64_t{1} << 18) / std::max<std::int64_t>(1, weight.cols()));
    rows = (rows + align - 1) / align * align;
    return std::min(rows, (weight.rows() + align - 1) / align * align);
}

void checkInputWidth(const LinearSource& weight, const Activations& x)
{
    if (x.cols != weight.cols()) {
        throw std::invalid_argument(weight.describe() + ": takes " + std::to_string(weight.cols()) +
                                    " inputs, the activations have " + std::to_string(x.cols));
    }
}

std::vector<float> inverseFrequencies(const RopeSpec& rope)
{
    const int half = rope.rotaryDims / 2;
    std::vector<float> inv(static_cast<std::size_t>(half));
    for (int j = 0; j < half; ++j) {
        inv[j] = 1.0f / std::pow(static_cast<float>(rope.theta),
                                 static_cast<float>(2 * j) / static_cast<float>(rope.rotaryDims));
    }
    if (rope.llama3Factor > 0) { // transformers' _compute_llama3_parameters
        const double lowWavelen = rope.llama3OriginalMax / rope.llama3LowFreq;
        const double highWavelen = rope.llama3OriginalMax / rope.llama3HighFreq;
        for (auto& f : inv) {
            const double wavelen = 2 * std::numbers::pi / f;
            if (wavelen > lowWavelen) {
                f = static_cast<float>(f / rope.llama3Factor);
            } else if (wavelen >= highWavelen) {
                const double smooth = (rope.llama3OriginalMax / wavelen - rope.llama3LowFreq) /
                                      (rope.llama3HighFreq - rope.llama3LowFreq);
                f = static_cast<float>((1 - smooth) * f / rope.llama3Factor + smooth * f);
            }
        }
    }
    return inv;
}

/// y = x · Wᵀ, the weight decoded tile by tile.
void multiplyInto(const LinearSource& weight, const Activations& x, Activations& y, unsigned threads)
{
    const std::int64_t tile = tileRows(weight);
    const auto tiles = static_cast<std::size_t>((weight.rows() + tile - 1) / tile);
    parallelFor(tiles, 1, threads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> buffer(static_cast<std::size_t>(tile * weight.cols()));
        for (std::size_t t = begin; t < end; ++t) {
            const std::int64_t first = static_cast<std::int64_t>(t) * tile;
            const std::int64_t count = std::min(tile, weight.rows() - first);
            weight.decode(first, static_cast<std::size_t>(count), buffer.data());
            gemm::multiplyTransposed(x.values.data(), x.rows, x.cols, buffer.data(), count,
                                     y.values.data() + first, y.cols);
        }
    });
}

} // namespace

Activations linear(const LinearSource& weight, const Activations& x, unsigned threads)
{
    checkInputWidth(weight, x);
    Activations y(x.rows, weight.rows());
    if (x.rows == 0) {
        return y;
    }
    if (weight.inputQuantization() != InputQuantization::None) {
        Activations served = x;
        quantizeInputs(weight.inputQuantization(), served);
        multiplyInto(weight, served, y, threads);
    } else {
        multiplyInto(weight, x, y, threads);
    }
    return y;
}

Activations linearBf16(const LinearSource& weight, const Activations& x, unsigned threads)
{
    if (weight.inputQuantization() != InputQuantization::None) {
        return linear(weight, x, threads);
    }
    checkInputWidth(weight, x);
    Activations y(x.rows, weight.rows());
    if (x.rows == 0) {
        return y;
    }
    const gemm::Bf16Blocks xs(x.values.data(), x.rows, x.cols); // once, read by every tile
    // Tiles of 32 rows or more: the AMX kernel fills two 16-column tiles of y per pass.
    const std::int64_t tile = tileRows(weight, 32);
    const auto tiles = static_cast<std::size_t>((weight.rows() + tile - 1) / tile);
    parallelFor(tiles, 1, threads, [&](std::size_t begin, std::size_t end) {
        thread_local std::vector<std::uint16_t> buffer; // kept: a fresh tile per call costs page faults
        for (std::size_t t = begin; t < end; ++t) {
            const std::int64_t first = static_cast<std::int64_t>(t) * tile;
            const std::int64_t count = std::min(tile, weight.rows() - first);
            const std::uint16_t* rows = weight.storedBf16(first);
            if (rows == nullptr) {
                buffer.resize(static_cast<std::size_t>(tile * weight.cols()));
                weight.decodeBf16(first, static_cast<std::size_t>(count), buffer.data());
                rows = buffer.data();
            }
            gemm::multiplyTransposedBf16(xs, rows, count, y.values.data() + first, y.cols);
        }
    });
    return y;
}

void rmsNorm(Activations& x, const std::vector<float>& weight, double eps, std::int64_t groupSize)
{
    const std::int64_t width = groupSize > 0 ? groupSize : x.cols;
    if (static_cast<std::int64_t>(weight.size()) != width || x.cols % width != 0) {
        throw std::invalid_argument("RMSNorm weight of " + std::to_string(weight.size()) +
                                    " does not fit rows of " + std::to_string(x.cols));
    }
    for (std::int64_t r = 0; r < x.rows; ++r) {
        for (std::int64_t g = 0; g < x.cols; g += width) {
            float* v = x.row(r) + g;
            double sum = 0;
            for (std::int64_t i = 0; i < width; ++i) {
                sum += static_cast<double>(v[i]) * v[i];
            }
            const auto inv = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(width) + eps));
            for (std::int64_t i = 0; i < width; ++i) {
                v[i] = weight[i] * (v[i] * inv);
            }
        }
    }
}

void applyRope(Activations& x, const std::vector<std::int64_t>& positions, std::int64_t headDim,
               const RopeSpec& rope)
{
    const auto inv = inverseFrequencies(rope);
    const std::int64_t half = rope.rotaryDims / 2;
    std::vector<float> cosv(static_cast<std::size_t>(half)), sinv(static_cast<std::size_t>(half));
    for (std::int64_t r = 0; r < x.rows; ++r) {
        const auto pos = static_cast<float>(positions[r]);
        for (std::int64_t j = 0; j < half; ++j) {
            const float angle = pos * inv[j];
            cosv[j] = std::cos(angle);
            sinv[j] = std::sin(angle);
        }
        for (std::int64_t h = 0; h < x.cols; h += headDim) {
            float* v = x.row(r) + h;
            for (std::int64_t j = 0; j < half; ++j) {
                const std::int64_t i1 = rope.neox ? j : 2 * j;
                const std::int64_t i2 = rope.neox ? j + half : 2 * j + 1;
                const float a = v[i1];
                const float b = v[i2];
                v[i1] = a * cosv[j] - b * sinv[j];
                v[i2] = b * cosv[j] + a * sinv[j];
            }
        }
    }
}

Activations siluAndMul(const Activations& gate, const Activations& up)
{
    Activations out(gate.rows, gate.cols);
    for (std::size_t i = 0; i < out.values.size(); ++i) {
        const float g = gate.values[i];
        out.values[i] = g / (1.0f + std::exp(-g)) * up.values[i];
    }
    return out;
}

void softplusGate(Activations& x, const Activations& g, std::int64_t headDim)
{
    const bool perElement = g.cols == x.cols;
    for (std::int64_t r = 0; r < x.rows; ++r) {
        for (std::int64_t c = 0; c < x.cols; ++c) {
            const float gv = g.row(r)[perElement ? c : c / headDim];
            // torch.nn.functional.softplus (beta 1, threshold 20)
            const float s = gv > 20.0f ? gv : std::log1p(std::exp(gv));
            x.row(r)[c] *= s;
        }
    }
}

void addInPlace(Activations& x, const Activations& y)
{
    for (std::size_t i = 0; i < x.values.size(); ++i) {
        x.values[i] += y.values[i];
    }
}

void attend(const Activations& queries, const std::vector<RowKeys>& keys, std::int64_t heads,
            std::int64_t kvHeads, std::int64_t headDim, Activations& out, unsigned threads)
{
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    const std::int64_t group = heads / kvHeads;
    std::int64_t mostKeys = 0;
    for (const auto& row : keys) {
        mostKeys = std::max(mostKeys, std::max<std::int64_t>(0, row.context.end - row.context.first) +
                                          std::max<std::int64_t>(0, row.own.end - row.own.first));
    }
    // Heads outside, rows inside: one KV head's keys and values stay in cache while every row reads them.
    parallelFor(static_cast<std::size_t>(heads), 1, threads, [&](std::size_t begin, std::size_t end) {
        std::vector<float> scratch(static_cast<std::size_t>(mostKeys + 64));
        for (std::size_t h = begin; h < end; ++h) {
            const std::int64_t kvOffset = (static_cast<std::int64_t>(h) / group) * headDim;
            const auto headKeys = [&](const AttentionKeys& k) {
                const std::int64_t count = std::max<std::int64_t>(0, k.end - k.first);
                return count == 0 ? kernels::HeadKeys{}
                                  : kernels::HeadKeys{k.keys->row(k.first) + kvOffset,
                                                      k.values->row(k.first) + kvOffset, k.keys->cols, count};
            };
            for (std::int64_t r = 0; r < queries.rows; ++r) {
                const auto offset = static_cast<std::int64_t>(h) * headDim;
                kernels::attendHead(queries.row(r) + offset, headKeys(keys[r].context), headKeys(keys[r].own),
                                    headDim, scale, scratch.data(), out.row(r) + offset);
            }
        }
    });
}

} // namespace spark
