// The server's own descriptors (the pressure eventfd, the wake and abort pipes) failing to open
// is the machine's failure (no descriptor left), a MachineError: atlas-serve exits 4, not 3 as
// for a bad model or option (README, "Exit codes").
#if ATLAS_HAVE_HTTPLIB

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>

#include <doctest/doctest.h>

#include "common/machine_error.hpp"
#include "server/http_connection.hpp"
#include "tests/sanitized.hpp"
#include "tests/skip.hpp"

namespace {

/// What `f` throws while this process may open no descriptor (RLIMIT_NOFILE 0), as a
/// MachineError's message; "" when it throws something else or nothing.
template <class F>
std::string machine_error_without_descriptors(F f) {
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &old) == 0);
  rlimit none = old;
  none.rlim_cur = 0;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &none) == 0);
  // Only catch while no descriptor is left, and look at the exception after the limit is back:
  // UBSan's dynamic type check of a caught object reads /proc/self/maps, which it cannot open
  // with no descriptor, and reports a false "invalid vptr" (seen under make test-sanitize).
  std::exception_ptr thrown;
  try {
    f();
  } catch (...) {
    thrown = std::current_exception();
  }
  ::setrlimit(RLIMIT_NOFILE, &old);
  std::string what;
  try {
    if (thrown) std::rethrow_exception(thrown);
  } catch (const atlas::MachineError& e) {
    what = e.what();
  } catch (...) {
  }
  return what;
}

}  // namespace

TEST_CASE("server: no descriptor for the eventfd or the pipes is a MachineError (exit 4), naming the call and errno") {
  if (atlas::test::kSanitized)
    ATLAS_SKIP("built with the sanitizers (tests/sanitized.hpp): UBSan's vptr check of the server under construction "
               "reads /proc/self/maps, which it cannot open with no descriptor left, and reports a false error");
  const std::string pressure = machine_error_without_descriptors([] { atlas::server::Pressure p; });
  CHECK(pressure == std::string("cannot create an eventfd: ") + std::strerror(EMFILE));
  const std::string server = machine_error_without_descriptors([] { atlas::server::HttpServer s(atlas::server::ConnectionLimits{}); });
  INFO(server);
  CHECK(server.starts_with("cannot create "));
  CHECK(server.find(std::strerror(EMFILE)) != std::string::npos);
}

#endif
