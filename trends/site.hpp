#pragma once
// The report as a static site: plain HTML and inline SVG (svg_chart.hpp), no script, no
// stylesheet or font fetched, so it opens from the file system with no server and no network.
//
//   <out>/index.html                                    machine classes, drift, unparsable records
//   <out>/<machine_class>/index.html                    per line: last gate verdict, records left
//                                                       out, drift, steps, metrics that moved most
//   <out>/<machine_class>/<gate>-<cpu_id>/<suite>.html  a chart per metric of the suite
#include <filesystem>
#include <vector>

#include "trends/report.hpp"

namespace atlas::trends {

/// Writes the site under `out_dir` (created; files of an earlier report are replaced, others
/// left alone) and returns the pages written, index first. Throws atlas::Error naming a file
/// that cannot be written.
std::vector<std::filesystem::path> write_site(const Report& r, const std::filesystem::path& out_dir);

}  // namespace atlas::trends
