// Whether a test is built with AddressSanitizer (TSO_UNDER_ASAN, 0 or 1), for
// tests whose subject it changes: freed memory held in quarantine, a binary
// that runs several times slower. GCC defines __SANITIZE_ADDRESS__, clang
// __has_feature(address_sanitizer).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TSO_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TSO_UNDER_ASAN 1
#endif
#endif
#ifndef TSO_UNDER_ASAN
#define TSO_UNDER_ASAN 0
#endif
