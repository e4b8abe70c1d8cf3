# CMake toolchain file: cross-build Sparkulator for aarch64 Linux (DGX Spark's Grace CPU, any arm64 Debian)
# with Debian's cross toolchain (gcc/g++-aarch64-linux-gnu), e.g.
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=packaging/aarch64.cmake \
#         -DSPARK_BUILD_GUI=OFF -DSPARK_CUDA=OFF [-DSPARK_AARCH64_SYSROOT=DIR]
# The arm64 libraries (Qt 6 Core/Test, Highway, Boost headers, nlohmann-json) are found
#  - by default where dpkg multiarch installs them (apt-get install qt6-base-dev:arm64 ...):
#    /usr/lib/aarch64-linux-gnu, /usr/include/aarch64-linux-gnu, /usr/include, /usr/share;
#  - or, with SPARK_AARCH64_SYSROOT (cache variable or environment), under DIR/usr/lib/aarch64-linux-gnu
#    etc. of a folder the arm64 .debs were unpacked into (packaging/test-aarch64.sh does this when
#    multiarch would have to upgrade installed amd64 packages to matching versions).
# Qt's host tools (moc) come from the build machine's Qt (QT_HOST_PATH=/usr, same Qt version), and
# try_run/ctest run arm64 programs through qemu-aarch64-static (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT SPARK_AARCH64_SYSROOT AND DEFINED ENV{SPARK_AARCH64_SYSROOT})
  set(SPARK_AARCH64_SYSROOT "$ENV{SPARK_AARCH64_SYSROOT}")
endif()
set(SPARK_AARCH64_SYSROOT "${SPARK_AARCH64_SYSROOT}" CACHE PATH
    "Folder with unpacked arm64 .debs (empty: the system's dpkg multiarch /usr/lib/aarch64-linux-gnu)")
# try_compile projects re-read this file; hand the choice on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES SPARK_AARCH64_SYSROOT)

if(SPARK_AARCH64_SYSROOT)
  set(_spark_root "${SPARK_AARCH64_SYSROOT}")
  set(CMAKE_FIND_ROOT_PATH "${_spark_root}")
  # Shared libraries that Qt's libraries need (ICU, glib, ...) live only in the sysroot: the linker
  # must find them there, not among the build machine's amd64 libraries.
  set(_spark_libdirs "${_spark_root}/lib/aarch64-linux-gnu:${_spark_root}/usr/lib/aarch64-linux-gnu")
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_spark_libdirs}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_spark_libdirs}")
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L "${_spark_root}")
else()
  set(_spark_root "")
  set(CMAKE_FIND_ROOT_PATH /)
  # multiarch: libc6:arm64 puts the dynamic loader at /lib/ld-linux-aarch64.so.1 itself
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
endif()

# Programs (moc, pkg-config) from the build machine; libraries, headers and packages only for arm64.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (pkg_check_modules in any find module) must see the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "${_spark_root}/usr/lib/aarch64-linux-gnu/pkgconfig:${_spark_root}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${_spark_root}")
unset(ENV{PKG_CONFIG_PATH})

# Qt 6 cross builds take moc/rcc/uic from a Qt of the same version built for the build machine.
set(QT_HOST_PATH /usr CACHE PATH "Qt installation for the build machine (host tools)")
if(NOT QT_HOST_PATH_CMAKE_DIR)
  execute_process(COMMAND cc -print-multiarch OUTPUT_VARIABLE _spark_host_multiarch
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT _spark_host_multiarch)
    set(_spark_host_multiarch "${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu")
  endif()
  set(QT_HOST_PATH_CMAKE_DIR "/usr/lib/${_spark_host_multiarch}/cmake" CACHE PATH "CMake packages of the host Qt")
endif()
