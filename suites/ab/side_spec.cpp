#include "suites/ab/side_spec.hpp"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "suites/error.hpp"

namespace atlas::suites {

nlohmann::json SideSpec::to_json() const { return {{"label", label}, {"spec", text}, {"env", env}, {"options", options}}; }

SideSpec parse_side_spec(std::string_view text, std::string label) {
  SideSpec s;
  s.label = std::move(label);
  s.text = text;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw SuiteError("--" + s.label + ": '" + word + "' is not KEY=VALUE (e.g. ATLAS_X=1 or threads=1)");
    }
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    auto& into = std::isupper(static_cast<unsigned char>(key[0])) ? s.env : s.options;
    if (into.count(key)) throw SuiteError("--" + s.label + ": '" + key + "' is given twice");
    into[key] = value;
  }
  return s;
}

ScopedEnv::ScopedEnv(const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) {
    const char* old = std::getenv(k.c_str());
    saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv(k.c_str(), v.c_str(), 1);
  }
}

ScopedEnv::~ScopedEnv() {
  for (const auto& [k, v] : saved_) {
    if (v) ::setenv(k.c_str(), v->c_str(), 1);
    else ::unsetenv(k.c_str());
  }
}

EnvScopedTarget::EnvScopedTarget(std::unique_ptr<Target> inner, std::map<std::string, std::string> env)
    : inner_(std::move(inner)), env_(std::move(env)) {}

TargetResponse EnvScopedTarget::generate(const TargetRequest& req) {
  ScopedEnv e(env_);
  return inner_->generate(req);
}

void EnvScopedTarget::reset_session() {
  ScopedEnv e(env_);
  inner_->reset_session();
}

nlohmann::json EnvScopedTarget::provenance() const {
  nlohmann::json p = inner_->provenance();
  p["env"] = env_;
  return p;
}

}  // namespace atlas::suites
