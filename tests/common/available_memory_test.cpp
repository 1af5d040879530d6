// Available memory: MemAvailable from /proc/meminfo, the bound a KV cache is checked against.
#include <doctest/doctest.h>

#include <unistd.h>

#include "common/available_memory.hpp"

TEST_CASE("parse_mem_available: the MemAvailable line in kB, nothing else") {
  const char* meminfo =
      "MemTotal:       24683652 kB\n"
      "MemFree:        21471184 kB\n"
      "MemAvailable:   22364980 kB\n"
      "Buffers:          123456 kB\n";
  CHECK(atlas::parse_mem_available(meminfo) == 22364980ull * 1024);
  CHECK_FALSE(atlas::parse_mem_available("MemTotal: 1 kB\nMemFree: 1 kB\n").has_value());  // kernels before 3.14
  CHECK_FALSE(atlas::parse_mem_available("MemAvailable: lots\n").has_value());
  CHECK_FALSE(atlas::parse_mem_available("MemAvailable: 12\n").has_value());  // no unit
  CHECK_FALSE(atlas::parse_mem_available("").has_value());
}

TEST_CASE("available_memory_bytes: on Linux, more than zero and at most the machine's total") {
  const auto avail = atlas::available_memory_bytes();
  REQUIRE(avail.has_value());
  const double total = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  CHECK(*avail > 0);
  CHECK(static_cast<double>(*avail) <= total);
}
