#pragma once

#include <QObject>
#include <QStringList>
#include <memory>

class QSettings;

namespace spark {

/// @brief The recently opened checkpoints, newest first, kept in QSettings. Entries that no longer exist
/// are pruned whenever the list is read, so the menu never offers a dead path.
class RecentFiles : public QObject
{
    Q_OBJECT

  public:
    static constexpr int MaxEntries = 10;

    /// @brief Uses @p settings (not owned; must outlive this object), or the application's default
    /// QSettings when null.
    explicit RecentFiles(QSettings* settings = nullptr, QObject* parent = nullptr);
    ~RecentFiles() override;

    /// @brief Existing entries, newest first (at most MaxEntries).
    QStringList paths();
    /// @brief Moves @p path to the front (absolute, without duplicates).
    void add(const QString& path);
    void clear();

  Q_SIGNALS:
    void changed();

  private:
    void store(const QStringList& paths);
    QStringList load() const;

    std::unique_ptr<QSettings> m_ownedSettings;
    QSettings* m_settings = nullptr;
};

} // namespace spark
