# Cross build for 64-bit ARM Linux with Debian's cross toolchain (g++-aarch64-linux-gnu) and the
# arm64 -dev packages of multiarch (scripts/setup_aarch64.sh installs both). Test binaries run
# under qemu-aarch64 with every CPU feature it emulates (NEON, dotprod, i8mm, SVE), so `ctest`
# in the build directory runs them as on an ARM machine.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Libraries and package configs come from the arm64 multiarch directories (/usr/lib/aarch64-linux-gnu);
# header-only packages (Boost, nlohmann_json, CLI11) are the host's, the same on every architecture.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# The emulated programs load the arm64 multiarch glibc (/lib/ld-linux-aarch64.so.1 and
# /lib/aarch64-linux-gnu), never the cross toolchain's /usr/aarch64-linux-gnu: with -L there, the
# cross ld.so meets the multiarch libc.so.6 of another Debian revision and the first thread a
# program starts never runs.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;max;-L;/)
