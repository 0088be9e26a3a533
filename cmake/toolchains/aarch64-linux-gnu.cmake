# Cross toolchain for 64-bit ARM (Debian: g++-aarch64-linux-gnu).
# Tests run under qemu-user (Debian: qemu-user).
#   cmake -S . -B build-cross-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DF2FSCORE_HEADER_DEPS=<dir holding tl/ boost/ CLI/>
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(F2FSCORE_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${F2FSCORE_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${F2FSCORE_CROSS_TRIPLE}-g++)

set(F2FSCORE_CROSS_ROOT /usr/${F2FSCORE_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${F2FSCORE_CROSS_ROOT})
# Programs (zstd, sh) come from the host; libraries, headers and packages
# only from the target's sysroot, so the host's x86-64 libblkid is never
# picked up.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${F2FSCORE_CROSS_ROOT})
