# Cross toolchain for 64-bit big-endian IBM Z (Debian: g++-s390x-linux-gnu).
# Tests run under qemu-user (Debian: qemu-user).
#   cmake -S . -B build-cross-s390x \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x-linux-gnu.cmake \
#     -DF2FSCORE_HEADER_DEPS=<dir holding tl/ boost/ CLI/>
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(F2FSCORE_CROSS_TRIPLE s390x-linux-gnu)
set(F2FSCORE_QEMU qemu-s390x)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
