// core/util/parallel: the SPARK_THREADS limit (HACKING.md and docs/quantization.md, "SPARK_THREADS") and
// parallelFor's coverage.
#include "core/util/parallel.h"

#include <QTest>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace spark;

namespace {

/// Sets SPARK_THREADS (or unsets it for nullptr) for one scope and restores the caller's value after.
class ScopedThreadsVariable
{
  public:
    explicit ScopedThreadsVariable(const char* value)
        : had_(qEnvironmentVariableIsSet("SPARK_THREADS")), old_(qgetenv("SPARK_THREADS"))
    {
        if (value != nullptr) {
            qputenv("SPARK_THREADS", value);
        } else {
            qunsetenv("SPARK_THREADS");
        }
    }
    ~ScopedThreadsVariable()
    {
        if (had_) {
            qputenv("SPARK_THREADS", old_);
        } else {
            qunsetenv("SPARK_THREADS");
        }
    }
    ScopedThreadsVariable(const ScopedThreadsVariable&) = delete;
    ScopedThreadsVariable& operator=(const ScopedThreadsVariable&) = delete;

  private:
    bool had_;
    QByteArray old_;
};

} // namespace

class TestParallel : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void limitParsing();
    void resolveHonoursLimit();
    void oneThreadStartsNone();
    void coversRangeOnce();
};

void TestParallel::limitParsing()
{
    {
        const ScopedThreadsVariable unset(nullptr);
        QCOMPARE(threadLimit(), 0u);
    }
    {
        const ScopedThreadsVariable empty("");
        QCOMPARE(threadLimit(), 0u);
    }
    {
        const ScopedThreadsVariable three("3");
        QCOMPARE(threadLimit(), 3u);
    }
    for (const char* bad : {"0", "-1", "two", "2x", " 2", "99999999999999999999"}) {
        const ScopedThreadsVariable invalid(bad);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, threadLimit());
    }
}

void TestParallel::resolveHonoursLimit()
{
    {
        const ScopedThreadsVariable unset(nullptr);
        QCOMPARE(resolveThreads(5), 5u);
        QVERIFY(resolveThreads(0) >= 1u);
    }
    const ScopedThreadsVariable two("2");
    QCOMPARE(resolveThreads(0), 2u); // the default
    QCOMPARE(resolveThreads(8), 2u); // an upper bound for explicit requests too
    QCOMPARE(resolveThreads(1), 1u);
}

void TestParallel::oneThreadStartsNone()
{
    // Callers may hand parallelFor a thread count without resolveThreads (the tests ask for 3): the
    // limit applies there as well, so every chunk runs on the calling thread.
    const ScopedThreadsVariable one("1");
    const auto caller = std::this_thread::get_id();
    std::size_t covered = 0;
    bool otherThread = false;
    parallelFor(1000, 10, 4, [&](std::size_t begin, std::size_t end) {
        otherThread = otherThread || std::this_thread::get_id() != caller;
        covered += end - begin;
    });
    QVERIFY(!otherThread);
    QCOMPARE(covered, std::size_t{1000});
}

void TestParallel::coversRangeOnce()
{
    // With the caller's SPARK_THREADS (1 in emulated runs, where a second thread must not start).
    std::vector<std::atomic<int>> hits(997);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    parallelFor(hits.size(), 7, 3, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            ++hits[i];
        }
        std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
    });
    for (const auto& h : hits) {
        QCOMPARE(h.load(), 1);
    }
    const unsigned limit = threadLimit();
    QVERIFY(threads.size() <= (limit > 0 ? limit : 3u));
}

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
