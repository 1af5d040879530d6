#include "trends/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/number_format.hpp"
#include "records/metric.hpp"
#include "trends/html_text.hpp"

namespace atlas::trends {
namespace {

struct Frame {
  double left = 70, right = 20, top = 28, bottom = 78;  // room for the y labels and the rotated commit names
  double width = 0, height = 0;
  double y_lo = 0, y_hi = 1;
  std::size_t slots = 1;
  double x(std::size_t commit) const {
    const double plot_w = width - left - right;
    return slots <= 1 ? left + plot_w / 2 : left + plot_w * static_cast<double>(commit) / static_cast<double>(slots - 1);
  }
  double y(double v) const {
    const double plot_h = height - top - bottom;
    return top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo));
  }
};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string value_text(const Series& s, double v) {
  return s.identity ? records::identity_hex(v, s.unit) : format_number(v);
}

std::string point_title(const Line& line, const Series& s, std::size_t i) {
  const Point& p = s.points[i];
  const std::string& sha = line.commits[p.commit].sha;
  std::string t = sha.substr(0, 12) + ": median " + value_text(s, p.median) + " " + s.unit;
  if (!s.identity) t += ", p10-p90 " + format_number(p.p10) + "-" + format_number(p.p90);
  t += ", " + std::to_string(p.samples.size()) + " samples";
  if (!p.verdict.empty()) t += ", gate verdict: " + p.verdict;
  if (i > 0) {
    const Point& q = s.points[i - 1];
    const std::string& prev = line.commits[q.commit].sha;
    if (!s.identity && q.median != 0)
      t += "; " + format_number(100.0 * (p.median - q.median) / std::fabs(q.median)) + "% vs " + prev.substr(0, 7);
    else if (s.identity)
      t += p.median == q.median ? "; unchanged vs " + prev.substr(0, 7) : "; CHANGED vs " + prev.substr(0, 7);
    t += " (atlas-bench diff " + prev.substr(0, 12) + " " + sha.substr(0, 12) + ")";
  }
  return t;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> ticks;
  if (!(hi > lo) || count < 1) return {lo};
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double f : {1.0, 2.0, 5.0, 10.0}) {
    step = f * mag;
    if (step >= raw) break;
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

std::string svg_chart(const Line& line, const Series& s, const SeriesTrend& trend, const ChartSize& size) {
  Frame f;
  f.width = size.width;
  f.height = size.height;
  f.slots = line.commits.size();
  // The y range: every median, spread and the BASELINE, with a margin.
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : s.points) {
    if (s.identity) continue;
    lo = std::min({lo, p.p10, p.median});
    hi = std::max({hi, p.p90, p.median});
  }
  if (trend.baseline && !s.identity) {
    lo = std::min(lo, *trend.baseline);
    hi = std::max(hi, *trend.baseline);
  }
  if (s.identity || !std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double pad = std::max(std::fabs(hi) * 0.05, 1.0);
    lo -= pad;
    hi += pad;
  }
  const auto ticks = s.identity ? std::vector<double>{} : nice_ticks(lo, hi, 5);
  if (!ticks.empty()) {
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : (hi - lo);
    lo = std::min(lo, ticks.front() - (ticks.front() > lo ? step : 0));
    hi = std::max(hi, ticks.back() + (ticks.back() < hi ? step : 0));
  }
  f.y_lo = lo;
  f.y_hi = hi;

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << size.width << "\" height=\"" << size.height
    << "\" viewBox=\"0 0 " << size.width << " " << size.height << "\" role=\"img\" data-metric=\"" << html_escape(s.key)
    << "\" data-points=\"" << s.points.size() << "\">\n";
  o << "<title>" << html_escape(s.key + " (" + s.unit + ") over " + std::to_string(line.commits.size()) + " commits") << "</title>\n";
  const double x0 = f.left, x1 = f.width - f.right, y0 = f.top, y1 = f.height - f.bottom;
  // Axes, ticks, labels.
  o << "<g class=\"axis-y\" font-size=\"10\" font-family=\"sans-serif\">\n";
  o << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x0) << "\" y2=\"" << num(y1) << "\" stroke=\"#444\"/>\n";
  for (const double t : ticks) {
    o << "<line x1=\"" << num(x0 - 4) << "\" y1=\"" << num(f.y(t)) << "\" x2=\"" << num(x1) << "\" y2=\"" << num(f.y(t))
      << "\" stroke=\"#ddd\"/><text x=\"" << num(x0 - 6) << "\" y=\"" << num(f.y(t) + 3) << "\" text-anchor=\"end\">"
      << html_escape(format_number(t)) << "</text>\n";
  }
  o << "</g>\n";
  // The rotated y label has the chart's height, not its width: a long metric name ran past the
  // top and bottom and was cut (seen in a browser). One too long for the room is squeezed into it
  // (SVG textLength), never shortened.
  const std::string y_label = s.key + " (" + s.unit + ")";
  const double y_mid = (y0 + y1) / 2, y_room = 2 * y_mid - 8;
  constexpr double kLabelCharWidth = 6.2;  // px per character, sans-serif at 11 px (a generous mean)
  o << "<text class=\"axis-label axis-label-y\" x=\"14\" y=\"" << num(y_mid) << "\" font-size=\"11\" font-family=\"sans-serif\" "
    << "text-anchor=\"middle\" transform=\"rotate(-90 14 " << num(y_mid) << ")\"";
  if (static_cast<double>(y_label.size()) * kLabelCharWidth > y_room)
    o << " textLength=\"" << num(y_room) << "\" lengthAdjust=\"spacingAndGlyphs\"";
  o << ">" << html_escape(y_label) << "</text>\n";
  o << "<g class=\"axis-x\" font-size=\"10\" font-family=\"monospace\">\n";
  o << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x1) << "\" y2=\"" << num(y1) << "\" stroke=\"#444\"/>\n";
  // Name every commit while they fit, else every k-th (the hover titles still name each).
  const std::size_t every = std::max<std::size_t>(1, (f.slots * 14 + static_cast<std::size_t>(x1 - x0) - 1) / static_cast<std::size_t>(x1 - x0));
  for (std::size_t c = 0; c < f.slots; ++c) {
    if (c % every != 0 && c + 1 != f.slots) continue;
    const double x = f.x(c);
    o << "<text x=\"" << num(x) << "\" y=\"" << num(y1 + 10) << "\" text-anchor=\"end\" transform=\"rotate(-60 " << num(x) << " "
      << num(y1 + 10) << ")\">" << html_escape(line.commits[c].sha.substr(0, 7)) << "</text>\n";
  }
  o << "</g>\n";
  o << "<text class=\"axis-label axis-label-x\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(f.height - 4)
    << "\" font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"middle\">commit (oldest to newest, by commit date)</text>\n";

  if (!s.identity && !s.points.empty()) {
    // The spread band: p90 forwards, p10 backwards.
    o << "<polygon class=\"spread\" fill=\"#9ecae1\" fill-opacity=\"0.45\" stroke=\"none\" points=\"";
    for (const auto& p : s.points) o << num(f.x(p.commit)) << "," << num(f.y(p.p90)) << " ";
    for (auto it = s.points.rbegin(); it != s.points.rend(); ++it) o << num(f.x(it->commit)) << "," << num(f.y(it->p10)) << " ";
    o << "\"/>\n";
    const bool exact = s.kind != records::MetricKind::timed;
    o << "<path class=\"median\" fill=\"none\" stroke=\"#08519c\" stroke-width=\"1.5\" d=\"";
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      if (i == 0) {
        o << "M" << num(f.x(p.commit)) << "," << num(f.y(p.median));
      } else if (exact) {
        o << " H" << num(f.x(p.commit)) << " V" << num(f.y(p.median));
      } else {
        o << " L" << num(f.x(p.commit)) << "," << num(f.y(p.median));
      }
    }
    o << "\"/>\n";
  }
  if (trend.baseline && !s.identity) {
    const double y = f.y(*trend.baseline);
    o << "<g class=\"baseline\"><line x1=\"" << num(x0) << "\" y1=\"" << num(y) << "\" x2=\"" << num(x1) << "\" y2=\"" << num(y)
      << "\" stroke=\"#d95f02\" stroke-dasharray=\"6 4\"/><text x=\"" << num(x1) << "\" y=\"" << num(y - 4)
      << "\" font-size=\"10\" font-family=\"sans-serif\" text-anchor=\"end\" fill=\"#d95f02\">BASELINE "
      << html_escape(format_number(*trend.baseline)) << "</text></g>\n";
  }
  for (const auto& st : trend.steps) {
    const double x = (f.x(st.from) + f.x(st.to)) / 2;
    std::string what = line.commits[st.from].sha.substr(0, 7) + ".." + line.commits[st.to].sha.substr(0, 7) + ": ";
    what += s.identity ? "value changed" : format_number(st.delta_pct) + "% (" + format_number(st.before) + " to " +
                                               format_number(st.after) + "), confidence " + format_number(st.confidence);
    o << "<line class=\"step" << (st.worse ? " worse" : "") << "\" x1=\"" << num(x) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x)
      << "\" y2=\"" << num(y1) << "\" stroke=\"" << (st.worse ? "#cb181d" : "#238b45") << "\" stroke-dasharray=\"3 3\"><title>"
      << html_escape("step " + what) << "</title></line>\n";
  }
  const double mid = (y0 + y1) / 2;
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    const double x = f.x(p.commit), y = s.identity ? mid : f.y(p.median);
    o << "<circle class=\"point\" cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"3\" fill=\"#08519c\" data-commit=\""
      << html_escape(line.commits[p.commit].sha) << "\" data-median=\"" << html_escape(value_text(s, p.median)) << "\"><title>"
      << html_escape(point_title(line, s, i)) << "</title></circle>\n";
    if (p.verdict == "regression") {
      o << "<path class=\"marker regression\" fill=\"#cb181d\" d=\"M" << num(x) << "," << num(y - 14) << " l-6,-10 h12 z\"><title>"
        << html_escape("gate verdict at " + line.commits[p.commit].sha.substr(0, 12) + ": regression") << "</title></path>\n";
    } else if (p.verdict == "improved") {
      o << "<path class=\"marker improved\" fill=\"#238b45\" d=\"M" << num(x) << "," << num(y + 14) << " l-6,10 h12 z\"><title>"
        << html_escape("gate verdict at " + line.commits[p.commit].sha.substr(0, 12) + ": improved") << "</title></path>\n";
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace atlas::trends
