# CMake toolchain file of the images' build stage (docker/Dockerfile): cross-compiles for the
# Debian multiarch triple in the environment variable BALLAST_TRIPLE (aarch64-linux-gnu,
# arm-linux-gnueabihf) with Debian's cross compilers, against the target architecture's -dev
# packages installed beside the amd64 tools (dpkg multiarch, /usr/lib/<triple>).
# The triple is read from the environment so that CMake's try-compile projects see it too.
set(ballast_triple "$ENV{BALLAST_TRIPLE}")
if(ballast_triple STREQUAL "")
  message(FATAL_ERROR "cross.cmake: set BALLAST_TRIPLE to the target's multiarch triple")
endif()

set(CMAKE_SYSTEM_NAME Linux)
string(REGEX REPLACE "-.*" "" CMAKE_SYSTEM_PROCESSOR "${ballast_triple}")
set(CMAKE_C_COMPILER ${ballast_triple}-gcc)
set(CMAKE_CXX_COMPILER ${ballast_triple}-g++)
# find_package and find_library look in /usr/lib/<triple> (and its cmake/ folder) first.
set(CMAKE_LIBRARY_ARCHITECTURE ${ballast_triple})
# pkg-config (OpenBLAS): only the target's .pc files.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${ballast_triple}/pkgconfig:/usr/share/pkgconfig")
