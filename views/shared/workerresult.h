#pragma once

#include "core/io/ioerror.h"

#include <QPromise>
#include <QString>
#include <exception>
#include <utility>

namespace spark {

/// @brief The body of a background job's worker: adds @p work()'s result to @p promise, or a default result
/// whose `error` holds the exception's message, or nothing at all when the work was cancelled (a Cancelled
/// IoError). No exception may leave a worker thread (errors are values across threads, see HACKING.md).
template <typename Result, typename Work> void addResultOrError(QPromise<Result>& promise, Work&& work)
{
    Result result;
    try {
        result = std::forward<Work>(work)();
    } catch (const IoError& e) {
        if (e.kind() == IoErrorKind::Cancelled) {
            return;
        }
        result.error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        result.error = QString::fromStdString(e.what());
    }
    promise.addResult(std::move(result));
}

} // namespace spark
