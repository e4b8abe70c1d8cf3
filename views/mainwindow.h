#pragma once

#include <QMainWindow>

namespace spark {

/// @brief The Sparkulator main window: a thin shell over core; every action calls sparkcore.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
};

} // namespace spark
