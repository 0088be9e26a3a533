# Cross toolchain for 64-bit Windows (Debian: g++-mingw-w64-x86-64), the
# POSIX-threads variant of the compiler (std::thread and std::mutex need it).
# Tests run under wine (Debian: wine, wine64).
#   cmake -S . -B build-cross-windows \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-w64-mingw32.cmake \
#     -DF2FSCORE_HEADER_DEPS=<dir holding tl/ boost/ CLI/ nlohmann/>
# The libraries Debian has no mingw build of (zstd, lz4, lzo, zlib, ICU,
# liburing, libblkid) are not found, and their features are off unless
# given (scripts/cross-test.sh builds the codecs from Debian's sources and
# gives casefolding a table generated from the host's ICU:
# -DF2FSCORE_CASEFOLD_TABLE).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(F2FSCORE_CROSS_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${F2FSCORE_CROSS_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${F2FSCORE_CROSS_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${F2FSCORE_CROSS_TRIPLE}-windres)

set(F2FSCORE_CROSS_ROOT /usr/${F2FSCORE_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${F2FSCORE_CROSS_ROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The executables carry the compiler's runtime (libstdc++, libgcc,
# winpthread) inside them, so that they run without DLLs beside them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

set(CMAKE_CROSSCOMPILING_EMULATOR wine)
