// The speed model on a paired acceptance run (core/forward/acceptancespeed.h), shared by the CLI's
// `acceptance --drafter-ms` and the GUI's Acceptance tab: worked numbers and every rejected input.
#include "core/forward/acceptancespeed.h"

#include <QTest>
#include <stdexcept>

using namespace spark;

namespace {

AcceptanceSummary pairedSummary()
{
    AcceptanceSummary s;
    s.paired = true;
    s.k = 2;
    s.tauBase = 2.0;
    s.tauQuant = 1.9;
    s.tauDelta = -0.1;
    s.tauDeltaLow = -0.2;
    s.tauDeltaHigh = 0.0;
    return s;
}

} // namespace

class TestAcceptanceSpeed : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void savingFromStreamedBytes()
    {
        // Half the bytes: half the 10 ms drafter time saved, the 50 ms cycle becomes 45 ms.
        AcceptanceSpeedInputs in{10, 50, std::nullopt, 1000, 500};
        const auto s = predictAcceptanceSpeed(pairedSummary(), in);
        QCOMPARE(s.savingMs, 5.0);
        const double ratio = 50.0 / 45.0;
        QCOMPARE(s.changeUnchanged, ratio - 1);
        QCOMPARE(s.changeMeasured, 1.9 / 2.0 * ratio - 1);
        QCOMPARE(s.changeLow, 1.8 / 2.0 * ratio - 1);
        QCOMPARE(s.changeHigh, ratio - 1);
    }

    void givenSavingWins()
    {
        AcceptanceSpeedInputs in{10, 50, 2.0, 1000, 500};
        QCOMPARE(predictAcceptanceSpeed(pairedSummary(), in).savingMs, 2.0);
    }

    void badInputsAreRejected_data()
    {
        QTest::addColumn<bool>("paired");
        QTest::addColumn<double>("drafter");
        QTest::addColumn<double>("cycle");
        QTest::addColumn<double>("saving"); // < 0: not given
        QTest::addColumn<qulonglong>("before");
        QTest::addRow("unpaired") << false << 10.0 << 50.0 << 1.0 << 0ull;
        QTest::addRow("no drafter time") << true << 0.0 << 50.0 << 1.0 << 0ull;
        QTest::addRow("cycle shorter") << true << 10.0 << 10.0 << 1.0 << 0ull;
        QTest::addRow("no saving, no bytes") << true << 10.0 << 50.0 << -1.0 << 0ull;
        QTest::addRow("saving too large") << true << 10.0 << 50.0 << 10.0 << 0ull;
    }

    void badInputsAreRejected()
    {
        QFETCH(bool, paired);
        QFETCH(double, drafter);
        QFETCH(double, cycle);
        QFETCH(double, saving);
        QFETCH(qulonglong, before);
        auto summary = pairedSummary();
        summary.paired = paired;
        AcceptanceSpeedInputs in{drafter, cycle, saving < 0 ? std::nullopt : std::optional<double>(saving),
                                 before, 0};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, predictAcceptanceSpeed(summary, in));
    }
};

QTEST_GUILESS_MAIN(TestAcceptanceSpeed)
#include "tst_acceptancespeed.moc"
