#pragma once
// True when this test binary is built with AddressSanitizer (make test-sanitize: gcc defines
// __SANITIZE_ADDRESS__, clang answers __has_feature). Tests that measure time or run the binary
// under valgrind say they skip there: ASan's shadow memory cannot run under valgrind, and its
// 5-10x slowdown and ctest's parallel jobs make timings say nothing about the code.
namespace atlas::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace atlas::test
