// A property check for the fuzz targets: a violated property is a bug the
// fuzzer must report as a crash, with the message and the input it saved.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TSO_FUZZ_CHECK(cond, what)                                       \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::fprintf(stderr, "fuzz property violated: %s (%s)\n", what, #cond); \
      std::abort();                                                      \
    }                                                                    \
  } while (0)
