# `cpack -G DEB` in a release build folder produces an installable package: sparkulator_VERSION_amd64.deb
# natively, sparkulator_VERSION_arm64.deb from a cross build with packaging/aarch64.cmake.
set(CPACK_PACKAGE_NAME "sparkulator")
set(CPACK_PACKAGE_VENDOR "Sparkulator")
set(CPACK_PACKAGE_CONTACT "Sparkulator maintainers <sparkulator@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
if(CMAKE_CROSSCOMPILING)
  # CPack would take the build machine's `dpkg --print-architecture`.
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  else()
    message(WARNING "cpack: no Debian architecture known for ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  # dpkg-shlibdeps looks the libraries up in the build machine's dpkg database, which knows nothing of
  # arm64 libraries unpacked into a sysroot (packaging/test-aarch64.sh): explicit Depends instead, the
  # same that dpkg-shlibdeps gives for the amd64 build (Debian 12).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6 (>= 2.34), libgcc-s1 (>= 3.4), libhwy1 (>= 0.16.0), libqt6core6 (>= 6.4.0), libstdc++6 (>= 11)")
  if(SPARK_BUILD_GUI)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libqcustomplot2.1-qt6 (>= 2.1.0+dfsg1), libqt6gui6 (>= 6.1.2),"
           " libqt6svg6 (>= 6.2.0), libqt6widgets6 (>= 6.1.2)")
  endif()
endif()
include(CPack)
