#pragma once
// Callgrind client requests around a measured region (valgrind's <valgrind/callgrind.h>, header
// only). Outside valgrind each request is a few no-op instructions; without the header (valgrind
// not installed at build time) they compile to nothing, and the instructions suite reports that
// it cannot count.
//
// Used with `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no`: nothing is
// simulated until instrument_on() and nothing counted until collect_on(); dump(name) writes the counts since the last dump into "<out-file>.<n>" with
// "desc: Trigger: Client Request: <name>" and zeroes them. Valgrind 3.19 (Debian 12) has these
// requests (cachegrind got client requests only in 3.22).
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define ATLAS_HAVE_CALLGRIND_H 1
#endif
#endif

namespace atlas::suites::callgrind {

/// True when this build can talk to callgrind (the header was found at build time).
inline constexpr bool kClientRequests =
#ifdef ATLAS_HAVE_CALLGRIND_H
    true;
#else
    false;
#endif

/// True when running under valgrind (any tool).
inline bool running_on_valgrind() {
#ifdef ATLAS_HAVE_CALLGRIND_H
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

/// Starts instrumenting (with --instr-atstart=no, code before this runs at near native speed
/// and feeds no simulated cache).
inline void instrument_on() {
#ifdef ATLAS_HAVE_CALLGRIND_H
  CALLGRIND_START_INSTRUMENTATION;
#endif
}

/// Starts counting events (instructions, simulated cache accesses and misses).
inline void collect_on() {
#ifdef ATLAS_HAVE_CALLGRIND_H
  CALLGRIND_TOGGLE_COLLECT;
#endif
}
/// Stops counting; must follow collect_on() (the request toggles).
inline void collect_off() {
#ifdef ATLAS_HAVE_CALLGRIND_H
  CALLGRIND_TOGGLE_COLLECT;
#endif
}
/// Zeroes the counters (what ran since the last dump and was collected is dropped).
inline void zero() {
#ifdef ATLAS_HAVE_CALLGRIND_H
  CALLGRIND_ZERO_STATS;
#endif
}
/// Writes the counters since the last dump/zero to a new dump file named by `name`, then zeroes.
inline void dump(const char* name) {
#ifdef ATLAS_HAVE_CALLGRIND_H
  CALLGRIND_DUMP_STATS_AT(name);
#else
  (void)name;
#endif
}

}  // namespace atlas::suites::callgrind
