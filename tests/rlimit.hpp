#pragma once
// Runs a test step under a lowered resource limit (setrlimit), restored afterwards even when the
// step throws: how the tests make the machine fail on purpose (RLIMIT_FSIZE: a write fails with
// EFBIG as a full disk fails with ENOSPC; RLIMIT_NOFILE 0: no descriptor left, EMFILE).
#include <doctest/doctest.h>
#include <sys/resource.h>

namespace atlas::test {

template <typename F>
void with_rlimit(int resource, rlim_t value, F f) {
  rlimit old{};
  REQUIRE(::getrlimit(resource, &old) == 0);
  rlimit low = old;
  low.rlim_cur = value;
  REQUIRE(::setrlimit(resource, &low) == 0);
  try {
    f();
  } catch (...) {
    ::setrlimit(resource, &old);
    throw;
  }
  ::setrlimit(resource, &old);
}

}  // namespace atlas::test
