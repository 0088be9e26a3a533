# Cross toolchain for 32-bit x86 (Debian: g++-i686-linux-gnu).
# Tests run under qemu-user (Debian: qemu-user).
#   cmake -S . -B build-cross-i686 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/i686-linux-gnu.cmake \
#     -DF2FSCORE_HEADER_DEPS=<dir holding tl/ boost/ CLI/>
set(CMAKE_SYSTEM_PROCESSOR i686)
set(F2FSCORE_CROSS_TRIPLE i686-linux-gnu)
set(F2FSCORE_QEMU qemu-i386)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
