# make sanitize: the sanitizers' run-time options. CTest includes this file (TEST_INCLUDE_FILES, set
# in tests/CMakeLists.txt when KSTENCIL_SANITIZE is on) before it lists or runs any test, so every
# test inherits them: the Catch2 binary (its test discovery too), the Python tests and the kstencil
# runs they start, under mpiexec too. Options already in the environment are appended and win.
# exitcode=86: a sanitizer report must never pass for one of kstencil's own statuses (0-4).
# Leak checking costs about 1.3 s per process here (hundreds of processes: minutes), so it runs
# only with KSTENCIL_SANITIZE_LEAKS=1; its stacks are then unwound in full, as the suppressions
# (lsan.supp) need frames of Open MPI, whose code has no frame pointers.
if("$ENV{KSTENCIL_SANITIZE_LEAKS}")
  set(leaks "detect_leaks=1:fast_unwind_on_malloc=0")
else()
  set(leaks "detect_leaks=0")
endif()
set(ENV{ASAN_OPTIONS}
    "halt_on_error=1:exitcode=86:${leaks}:check_initialization_order=1:$ENV{ASAN_OPTIONS}")
set(ENV{LSAN_OPTIONS}
    "suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0:$ENV{LSAN_OPTIONS}")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1:exitcode=86:$ENV{UBSAN_OPTIONS}")
# hwloc's PCI discovery (under MPI_Init) reads pci.ids with a realloc per line: 3 s per process
# under AddressSanitizer, for a topology MPI needs only to place NICs.
set(ENV{HWLOC_COMPONENTS} "-pci")
# Tests that cannot run as they are under AddressSanitizer read this (tests/test_mpi.py).
set(ENV{KSTENCIL_SANITIZED} "1")
