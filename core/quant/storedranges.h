#pragma once

// The ranges behind stored scales. A method whose scales depend on a capture (`hessian`) cannot be
// recomputed from the source weight alone, but each of its groups' scales is CT's scale of one candidate of
// its grid over the source group's min-max: finding that candidate again tells verify and compare that the
// scale is one the method can choose, and gives the range under which the codes must be CT's RTN codes.

#include "core/io/dtype.h"
#include "core/quant/groupranges.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightrows.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace spark {

struct WeightScheme;

/// @brief Matches the stored scales of a [rows, cols] weight, group by group, with the candidates of a
/// searching rounding method on a symmetric integer scheme, streamed in row blocks like RangeSearch.
class StoredRangeMatch
{
  public:
    /// @p storedScales: the checkpoint's weight_scale as floats, [rows · groups per row] row-major.
    /// Throws QuantError when the method has no grid, the scheme is not symmetric integer, or the sizes
    /// disagree.
    StoredRangeMatch(const RoundingMethod& method, const WeightScheme& scheme, std::uint64_t rows,
                     std::uint64_t cols, DType dtype, std::vector<float> storedScales);
    ~StoredRangeMatch();
    StoredRangeMatch(const StoredRangeMatch&) = delete;
    StoredRangeMatch& operator=(const StoredRangeMatch&) = delete;

    /// @brief Matches the groups of @p rows; throws QuantError naming the row and group whose stored scale
    /// is none of the candidates (or whose weight is not finite).
    void addRows(const WeightRows& rows);
    /// @brief The matched ranges (the first matching candidate of each group), once every row was added.
    std::shared_ptr<const GroupRanges> finish();

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace spark
