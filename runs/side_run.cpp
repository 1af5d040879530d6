#include "runs/side_run.hpp"

#include <cstdio>
#include <sstream>

namespace atlas::runs {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string record_path_from(const std::string& out) {
  std::istringstream in(out);
  std::string line, path;
  while (std::getline(in, line))
    if (line.rfind("record: ", 0) == 0) path = line.substr(8);
  return path;
}

std::string last_lines(const std::string& s, std::size_t n) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

std::vector<std::string> side_argv(const std::string& binary, const std::string& data_dir, const std::string& suites,
                                   const std::string& suite_config, const std::string& backend, const std::string& model,
                                   const std::filesystem::path& out_dir) {
  std::vector<std::string> argv = {binary, "--data-dir", data_dir, "run", "--suite", suites, "--config", suite_config,
                                   "--backend", backend, "--out-dir", out_dir.string()};
  if (!model.empty()) argv.insert(argv.end(), {"--model", model});
  return argv;
}

}  // namespace atlas::runs
