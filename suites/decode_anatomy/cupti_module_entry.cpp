// The CUDA module's entry point for the decode-anatomy suite's CUPTI source
// (engine/backend_module.hpp); compiled into the module only (tools/CMakeLists.txt).
#include <memory>

#include "suites/decode_anatomy/cupti_anatomy_source.hpp"

/// make_cupti_anatomy_source() for a backend the module made; null for any other backend.
extern "C" __attribute__((visibility("default"))) std::unique_ptr<atlas::suites::AnatomySource>
atlas_make_cupti_anatomy_source(atlas::engine::Backend& backend) {
  return atlas::suites::make_cupti_anatomy_source(backend);
}
