#pragma once

#include <QString>
#include <optional>

namespace spark {

/// @brief What File ▸ Open Example opens: a trained EAGLE-3 head with the capture and the target model its
/// Acceptance and Budget tabs need, so that a newcomer can run every tab at once.
struct ExampleDraft
{
    QString draft;
    QString capture;
    QString target;
};

/// @brief The example installed beside the program (share/sparkulator/example) or, when the program runs from
/// a build tree, the trained drafts of its source tree (tests/data/trained); nullopt when neither is there.
std::optional<ExampleDraft> findExampleDraft();

} // namespace spark
