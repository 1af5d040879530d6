#pragma once
// One metric's history as a plain SVG chart, written by the program: no script, no font or
// library to fetch, so a report opens from the file system anywhere.
//
// x: the line's commits in order, each named by its first 7 hex digits (every commit of the
// line has a slot, so a gap shows a commit without the metric); y: the metric in its unit.
// Drawn: each commit's median (a line through the points; a counted or accuracy metric as a
// step line, since it holds its value until a commit changes it), the p10-p90 spread of its
// pooled samples as a band, the BASELINE value as a dashed line, the found steps as vertical
// dashed lines, and the stored gate verdicts as markers (regression: a red triangle, improved:
// a green one). Each point has a <title> (shown on hover) with the commit, median, spread,
// samples and the change from the commit before, and the `atlas-bench diff` that shows it.
// Elements carry classes the report's DOM check reads: "plot", "point", "spread", "baseline",
// "step", "marker regression" / "marker improved", "axis-x", "axis-y", "axis-label".
#include <optional>
#include <string>
#include <vector>

#include "trends/history.hpp"
#include "trends/trend.hpp"

namespace atlas::trends {

struct ChartSize {
  int width = 760, height = 260;
};

/// The SVG element (no XML prologue: it is inlined in a page). An identity metric plots the
/// points at one height and marks each change. Commits and names are escaped.
std::string svg_chart(const Line& line, const Series& series, const SeriesTrend& trend, const ChartSize& size = {});

/// Axis ticks: about `count` round values (1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int count = 5);

}  // namespace atlas::trends
