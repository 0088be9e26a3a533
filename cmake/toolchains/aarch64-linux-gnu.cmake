# Cross toolchain for 64-bit ARM (Debian: g++-aarch64-linux-gnu).
# Tests run under qemu-user (Debian: qemu-user).
#   cmake -S . -B build-cross-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DF2FSCORE_HEADER_DEPS=<dir holding tl/ boost/ CLI/>
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(F2FSCORE_CROSS_TRIPLE aarch64-linux-gnu)
set(F2FSCORE_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
