# The part every Linux cross toolchain file here shares (Debian's
# g++-<triple> cross compilers, tests under qemu-user). The including file
# sets CMAKE_SYSTEM_PROCESSOR, F2FSCORE_CROSS_TRIPLE and F2FSCORE_QEMU first.
set(CMAKE_SYSTEM_NAME Linux)
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

set(CMAKE_CROSSCOMPILING_EMULATOR ${F2FSCORE_QEMU} -L ${F2FSCORE_CROSS_ROOT})
