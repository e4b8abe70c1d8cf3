#pragma once

#include "core/plan/entrypreview.h"

namespace spark {

/// @brief One editable list of the plan editor: the entries of one of core's kinds (targets, ignore, scheme
/// rules), or the rounding rules "ENTRY=METHOD". Core keeps rounding rules out of its EntryKind and its
/// entry preview because they choose how modules are rounded, not which are quantized; in the editor they
/// are one more ordered list of the same shape. Converts from EntryKind, so the entry API reads as before.
struct PlanList
{
    enum Id { Targets, Ignore, Schemes, Roundings };

    constexpr PlanList(Id list) : id(list) {}
    constexpr PlanList(EntryKind kind)
        : id(kind == EntryKind::Target   ? Targets
             : kind == EntryKind::Ignore ? Ignore
                                         : Schemes)
    {
    }

    /// @brief The kind of core entry whose previews this list shows; rounding rules match like scheme rules.
    constexpr EntryKind entryKind() const
    {
        return id == Targets ? EntryKind::Target : id == Ignore ? EntryKind::Ignore : EntryKind::Scheme;
    }

    bool operator==(const PlanList&) const = default;

    Id id;
};

} // namespace spark
