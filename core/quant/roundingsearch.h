#pragma once

#include "core/io/dtype.h"
#include "core/quant/groupranges.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightrows.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace spark {

struct WeightScheme;

/// @brief The range search of a rounding method over one weight, streamed in row blocks (the exporter's
/// reader), with the method's global early stop over the whole tensor. Exactly llm-compressor's
/// `_grid_search_mse` for `mse` (rounding.md §1.2): candidates rnd(f32(m)·f32(p_i)) on min and max together,
/// CT calculate_qparams on each, fake quantization in the weight dtype, error per group, strict < so ties
/// keep the larger range. NVFP4 searches unrounded local scales without a global scale, as LC does.
/// `hessian` scores each candidate by (Q(w)-w)ᵀ H_gg (Q(w)-w) under the module's input Hessian.
class RangeSearch
{
  public:
    /// @brief A search for a [@p rows, @p cols] weight of @p dtype under @p scheme (a quantizing one).
    /// @p hessian: the input Hessian XᵀX ([cols, cols] row-major) a method that needsHessian() scores by;
    /// it must outlive the search. Throws QuantError when the columns do not divide by the scheme's group,
    /// or when the method needs a Hessian and none (or one of another size) is given.
    RangeSearch(const RoundingMethod& method, const WeightScheme& scheme, std::uint64_t rows,
                std::uint64_t cols, DType dtype, const std::vector<double>* hessian = nullptr);
    ~RangeSearch();
    RangeSearch(const RangeSearch&) = delete;
    RangeSearch& operator=(const RangeSearch&) = delete;

    /// @brief Searches the groups of @p rows (any block, by its firstRow). Throws the NonFinite QuantError
    /// naming the tensor at a NaN/Inf weight. Results do not depend on @p threads.
    void addRows(const WeightRows& rows, unsigned threads = 1);
    /// @brief The chosen ranges, once every row was added.
    std::shared_ptr<const GroupRanges> finish();

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// @brief RangeSearch over a whole weight held in memory (@p rows from row 0).
std::shared_ptr<const GroupRanges> searchRanges(const RoundingMethod& method, const WeightScheme& scheme,
                                                const WeightRows& rows, unsigned threads = 1,
                                                const std::vector<double>* hessian = nullptr);

} // namespace spark
