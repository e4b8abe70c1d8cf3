#include "views/mainwindow.h"

#include <QApplication>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Sparkulator"));
    QApplication::setOrganizationName(QStringLiteral("Sparkulator"));
    QApplication::setApplicationVersion(QStringLiteral(SPARK_VERSION));
    spark::MainWindow window;
    window.show();
    return QApplication::exec();
}
