#include "records/test_hooks.hpp"

namespace atlas::records {

std::vector<std::string> active_test_hooks(const Record& r) {
  std::vector<std::string> hooks;
  const nlohmann::json* backend = nullptr;
  if (r.config.contains("target") && r.config["target"].is_object()) {
    const auto& t = r.config["target"];
    if (t.contains("options") && t["options"].is_object() && t["options"].contains("backend") &&
        t["options"]["backend"].is_object())
      backend = &t["options"]["backend"];
  }
  for (const char* name : {"inject_decode_delay_us", "inject_decode_work"}) {
    if (backend == nullptr || !backend->contains(name)) continue;
    const auto& v = (*backend)[name];
    if (v.is_number() && v.get<double>() > 0) hooks.push_back(std::string(name) + "=" + v.dump());
  }
  if (r.config.contains("env") && r.config["env"].is_object()) {
    for (const char* name : {"ATLAS_CUDA_VETO_LAYER"}) {
      if (r.config["env"].contains(name)) {
        const auto& v = r.config["env"][name];
        const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        if (!text.empty()) hooks.push_back(std::string(name) + "=" + text);  // empty: the engine ignores it
      }
    }
  }
  return hooks;
}

}  // namespace atlas::records
