#include "views/window/recentfiles.h"

#include <QFileInfo>
#include <QSettings>

namespace spark {

namespace {

QString settingsKey()
{
    return QStringLiteral("recentFiles");
}

} // namespace

RecentFiles::RecentFiles(QSettings* settings, QObject* parent)
    : QObject(parent), m_ownedSettings(settings ? nullptr : std::make_unique<QSettings>()),
      m_settings(settings ? settings : m_ownedSettings.get())
{
}

RecentFiles::~RecentFiles() = default;

QStringList RecentFiles::load() const
{
    return m_settings->value(settingsKey()).toStringList();
}

void RecentFiles::store(const QStringList& paths)
{
    m_settings->setValue(settingsKey(), paths);
    Q_EMIT changed();
}

QStringList RecentFiles::paths()
{
    const QStringList stored = load();
    QStringList existing;
    for (const auto& path : stored) {
        if (QFileInfo::exists(path) && !existing.contains(path) && existing.size() < MaxEntries) {
            existing.append(path);
        }
    }
    if (existing != stored) {
        store(existing);
    }
    return existing;
}

void RecentFiles::add(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = load();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > MaxEntries) {
        list.removeLast();
    }
    store(list);
}

void RecentFiles::clear()
{
    store({});
}

} // namespace spark
