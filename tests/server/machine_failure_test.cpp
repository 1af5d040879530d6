// The server's own descriptors (the pressure eventfd, the wake and abort pipes) failing to open
// is the machine's failure (no descriptor left), a MachineError: atlas-serve exits 4, not 3 as
// for a bad model or option (README, "Exit codes").
#if ATLAS_HAVE_HTTPLIB

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <doctest/doctest.h>

#include "common/machine_error.hpp"
#include "server/http_connection.hpp"

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
  std::string what;
  try {
    f();
  } catch (const atlas::MachineError& e) {
    what = e.what();
  } catch (...) {
  }
  ::setrlimit(RLIMIT_NOFILE, &old);
  return what;
}

}  // namespace

TEST_CASE("server: no descriptor for the eventfd or the pipes is a MachineError (exit 4), naming the call and errno") {
  const std::string pressure = machine_error_without_descriptors([] { atlas::server::Pressure p; });
  CHECK(pressure == std::string("cannot create an eventfd: ") + std::strerror(EMFILE));
  const std::string server = machine_error_without_descriptors([] { atlas::server::HttpServer s(atlas::server::ConnectionLimits{}); });
  INFO(server);
  CHECK(server.starts_with("cannot create "));
  CHECK(server.find(std::strerror(EMFILE)) != std::string::npos);
}

#endif
