#include "chat/jinja_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>

#include "chat/error.hpp"
#include "chat/jinja_filters.hpp"

namespace atlas::chat::jinja {

namespace {

// What one render may do. A chat template comes from a model file, so a loop nest that multiplies
// (`range(10**6)` twice) or a string that doubles on every iteration must end in an error, not a
// hang or an out-of-memory kill. Real chat templates render kilobytes in a few thousand steps.
// Sizes: kMaxValueElements and kMaxValueText (jinja_value.hpp) bound range(), loop items, every
// value and the rendered output.

/// Work units per render: one per expression evaluated and statement run, kIterationUnits per loop
/// iteration, plus one per 64 bytes of each string and one per element (through every level) of
/// each list or dict an expression yields (values are copied, so big values cost what they weigh). A unit is about 1 us of CPU (several under ASan), so the bound
/// stops a render after about a second; 2,000 turns with 20 tools through Qwen2.5's real template
/// stay below 10^6 (chat_template_test).
constexpr std::size_t kMaxWork = 2'000'000;
/// A loop iteration builds a scope and a 9-entry `loop` object: ~2 us here, ~10 us under ASan, so
/// it costs 32 units (an empty nested loop of 10^5 x 10^5 ran 11 s in the sanitized fuzz build at
/// 1 unit per iteration).
constexpr std::size_t kIterationUnits = 32;

class Evaluator {
 public:
  explicit Evaluator(const V& ctx) { scopes_.push_back(ctx.is_object() ? ctx : V::object()); }

  void run(const std::vector<Node>& nodes, std::string& out) {
    for (const Node& n : nodes) exec(n, out);
  }

 private:
  [[noreturn]] static void type_error(int line, const std::string& what) { fail(line, what); }

  V lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return *f;
    }
    return undefined();
  }
  V* lookup_ref(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return &*f;
    }
    return nullptr;
  }

  /// Charges `units` of work to this render; fails past kMaxWork.
  void charge(std::size_t units, int line) {
    work_ += units;
    if (work_ > kMaxWork) type_error(line, "template rendering exceeded " + std::to_string(kMaxWork) + " steps (a loop that never ends in practice?)");
  }
  static void check_output(const std::string& out, int line) {
    if (out.size() > kMaxValueText) type_error(line, "rendered text longer than " + std::to_string(kMaxValueText) + " bytes");
  }

  void exec(const Node& n, std::string& out) {
    charge(1, n.line);
    switch (n.kind) {
      case Node::text:
        out += n.raw;
        check_output(out, n.line);
        return;
      case Node::output:
        out += to_text(eval(*n.expr));
        check_output(out, n.line);
        return;
      case Node::if_:
        for (const auto& [cond, body] : n.branches) {
          if (truthy(eval(*cond))) {
            run(body, out);
            return;
          }
        }
        run(n.else_body, out);
        return;
      case Node::set: {
        V v = eval(*n.expr);
        if (n.targets.size() == 2) {
          V* ns = lookup_ref(n.targets[0]);
          if (!ns || !ns->is_object()) type_error(n.line, "cannot set attribute of '" + n.targets[0] + "' (not a namespace)");
          // Only the assigned value: walking the whole namespace on every set made templates that
          // accumulate into one quadratic (`namespace(b=ns.a)` is checked where it is built).
          charge(check_value_size(v, n.line, "a namespace attribute"), n.line);
          (*ns)[n.targets[1]] = std::move(v);
        } else {
          scopes_.back()[n.targets[0]] = std::move(v);
        }
        return;
      }
      case Node::for_:
        exec_for(n, out);
        return;
    }
  }

  void exec_for(const Node& n, std::string& out) {
    V seq = eval(*n.expr);
    std::vector<V> items;
    if (seq.is_array()) {
      for (const auto& x : seq) items.push_back(x);
    } else if (seq.is_object()) {
      for (auto it = seq.begin(); it != seq.end(); ++it) items.push_back(it.key());
    } else if (seq.is_string()) {
      // iterate code points
      const std::string& s = seq.get_ref<const std::string&>();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        items.push_back(s.substr(i, j - i));
        if (items.size() > kMaxValueElements) type_error(n.line, "for loop over more than " + std::to_string(kMaxValueElements) + " items");
        i = j;
      }
    } else if (!is_undef(seq) && !seq.is_null()) {
      type_error(n.line, "for loop over a value that is not iterable: " + python_repr(seq));
    }
    auto bind = [&](V& scope, const V& item) {
      if (n.targets.size() == 1) {
        scope[n.targets[0]] = item;
      } else {
        if (!item.is_array() || item.size() != n.targets.size()) {
          type_error(n.line, "cannot unpack " + python_repr(item) + " into " + std::to_string(n.targets.size()) + " names");
        }
        for (std::size_t k = 0; k < n.targets.size(); ++k) scope[n.targets[k]] = item[k];
      }
    };
    if (n.loop_filter) {
      std::vector<V> kept;
      for (const auto& item : items) {
        charge(kIterationUnits, n.line);
        scopes_.push_back(V::object());
        bind(scopes_.back(), item);
        const bool keep = truthy(eval(*n.loop_filter));
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      run(n.else_body, out);
      return;
    }
    const long long len = static_cast<long long>(items.size());
    for (long long i = 0; i < len; ++i) {
      charge(kIterationUnits, n.line);
      scopes_.push_back(V::object());
      V& scope = scopes_.back();
      bind(scope, items[static_cast<std::size_t>(i)]);
      V loop = V::object();
      loop["index"] = i + 1;
      loop["index0"] = i;
      loop["revindex"] = len - i;
      loop["revindex0"] = len - i - 1;
      loop["first"] = i == 0;
      loop["last"] = i == len - 1;
      loop["length"] = len;
      loop["previtem"] = i > 0 ? items[static_cast<std::size_t>(i - 1)] : undefined();
      loop["nextitem"] = i + 1 < len ? items[static_cast<std::size_t>(i + 1)] : undefined();
      scope["loop"] = std::move(loop);
      run(n.body, out);
      scopes_.pop_back();
    }
  }

  static long long as_int(const V& v, int line) {
    if (v.is_number_integer()) return v.get<long long>();
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    if (v.is_number()) return int_of(v.get<double>(), line);
    type_error(line, "expected an integer, got " + python_repr(v));
  }

  V subscript(const V& obj, const V& key, int line) {
    if (obj.is_object()) {
      if (!key.is_string()) return undefined();
      auto it = obj.find(key.get<std::string>());
      return it == obj.end() ? undefined() : *it;
    }
    if (obj.is_array() || obj.is_string()) {
      if (!key.is_number_integer()) return undefined();
      long long i = key.get<long long>();
      const long long n = obj.is_array() ? static_cast<long long>(obj.size()) : static_cast<long long>(obj.get_ref<const std::string&>().size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return undefined();
      if (obj.is_array()) return obj[static_cast<std::size_t>(i)];
      return std::string(1, obj.get_ref<const std::string&>()[static_cast<std::size_t>(i)]);
    }
    (void)line;
    return undefined();
  }

  V slice(const V& obj, const Expr& e) {
    const bool str = obj.is_string();
    if (!str && !obj.is_array()) return undefined();
    const long long n = str ? static_cast<long long>(obj.get_ref<const std::string&>().size()) : static_cast<long long>(obj.size());
    const long long step = e.args.empty() ? 1 : as_int(eval(*e.args[0]), e.line);
    if (step == 0) type_error(e.line, "slice step cannot be zero");
    auto norm = [&](const ExprP& x, long long dflt) {
      if (!x) return dflt;
      V v = eval(*x);
      if (v.is_null()) return dflt;
      long long i = as_int(v, e.line);
      if (i < 0) i += n;
      return step > 0 ? std::clamp(i, 0LL, n) : std::clamp(i, -1LL, n - 1);
    };
    const long long lo = norm(e.b, step > 0 ? 0 : n - 1);
    const long long hi = norm(e.c, step > 0 ? n : -1);
    V out = str ? V(std::string()) : V::array();
    for (long long i = lo; step > 0 ? i < hi : i > hi; i += step) {
      if (str) out.get_ref<std::string&>() += obj.get_ref<const std::string&>()[static_cast<std::size_t>(i)];
      else out.push_back(obj[static_cast<std::size_t>(i)]);
    }
    return out;
  }

  V binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      V l = eval(*e.a);
      return truthy(l) ? eval(*e.b) : l;
    }
    if (op == "or") {
      V l = eval(*e.a);
      return truthy(l) ? l : eval(*e.b);
    }
    V l = eval(*e.a), r = eval(*e.b);
    if (op == "~") return to_text(l) + to_text(r);
    if (op == "==") return l == r && is_undef(l) == is_undef(r);
    if (op == "!=") return !(l == r && is_undef(l) == is_undef(r));
    if (op == "in" || op == "not in") {
      bool found = false;
      if (r.is_string() && l.is_string()) found = r.get<std::string>().find(l.get<std::string>()) != std::string::npos;
      else if (r.is_array()) found = std::find(r.begin(), r.end(), l) != r.end();
      else if (r.is_object() && l.is_string()) found = r.contains(l.get<std::string>());
      else if (!is_undef(r) && !r.is_null()) type_error(e.line, "'in' needs a string, list or mapping on the right, got " + python_repr(r));
      return op == "in" ? found : !found;
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      if (!((l.is_number() && r.is_number()) || (l.is_string() && r.is_string()))) {
        type_error(e.line, "cannot compare " + python_repr(l) + " " + op + " " + python_repr(r));
      }
      if (op == "<") return l < r;
      if (op == ">") return r < l;
      if (op == "<=") return !(r < l);
      return !(l < r);
    }
    if (op == "+") {
      if (l.is_string() && r.is_string()) return l.get<std::string>() + r.get<std::string>();
      if (l.is_array() && r.is_array()) {
        V out = l;
        for (const auto& x : r) out.push_back(x);
        charge(check_value_size(out, e.line, "a list"), e.line);  // a + a doubles through every level
        return out;
      }
    }
    if (!l.is_number() || !r.is_number()) {
      type_error(e.line, "operator '" + op + "' needs numbers, got " + python_repr(l) + " and " + python_repr(r));
    }
    const bool ints = l.is_number_integer() && r.is_number_integer();
    if (ints && (op == "+" || op == "-" || op == "*" || op == "//" || op == "%")) {
      return int_op(op == "//" ? '/' : op[0], l.get<long long>(), r.get<long long>(), e.line);
    }
    if (op == "+") return l.get<double>() + r.get<double>();
    if (op == "-") return l.get<double>() - r.get<double>();
    if (op == "*") return l.get<double>() * r.get<double>();
    if ((op == "/" || op == "//" || op == "%") && r.get<double>() == 0.0) type_error(e.line, "division by zero");
    if (op == "/") return l.get<double>() / r.get<double>();
    if (op == "//") return std::floor(l.get<double>() / r.get<double>());
    if (op == "%") return std::fmod(l.get<double>(), r.get<double>());
    type_error(e.line, "unknown operator '" + op + "'");
  }

  bool test(const Expr& e) {
    const V v = eval(*e.a);
    const std::string& t = e.name;
    bool r;
    if (t == "defined") r = !is_undef(v);
    else if (t == "undefined") r = is_undef(v);
    else if (t == "none") r = v.is_null();
    else if (t == "string") r = v.is_string();
    else if (t == "number") r = v.is_number();
    else if (t == "integer") r = v.is_number_integer();
    else if (t == "float") r = v.is_number_float();
    else if (t == "boolean") r = v.is_boolean();
    else if (t == "mapping") r = v.is_object();
    else if (t == "sequence" || t == "iterable") r = v.is_array() || v.is_string() || (t == "iterable" && v.is_object());
    else if (t == "true") r = v.is_boolean() && v.get<bool>();
    else if (t == "false") r = v.is_boolean() && !v.get<bool>();
    else if (t == "equalto" || t == "eq" || t == "sameas") {
      if (e.args.empty()) type_error(e.line, "test '" + t + "' needs an argument");
      r = v == eval(*e.args[0]);
    } else type_error(e.line, "unsupported test 'is " + t + "'");
    return e.negated ? !r : r;
  }

  V kwarg(const Expr& e, const std::string& name, std::size_t pos, V dflt) {
    for (const auto& [k, x] : e.kwargs) {
      if (k == name) return eval(*x);
    }
    return pos < e.args.size() ? eval(*e.args[pos]) : dflt;
  }

  V filter(const Expr& e) {
    return apply_filter(e.name, eval(*e.a), [&](const std::string& name, std::size_t pos, V dflt) { return kwarg(e, name, pos, std::move(dflt)); },
                        e.line);
  }
  V call(const Expr& e) {
    if (e.a->kind == Expr::attr) {
      const V obj = eval(*e.a->a);
      const std::string& m = e.a->name;
      if (obj.is_string()) {
        const std::string& s = obj.get_ref<const std::string&>();
        if (m == "strip" || m == "lstrip" || m == "rstrip") {
          V chars = kwarg(e, "chars", 0, nullptr);
          const std::string set = chars.is_string() ? chars.get<std::string>() : kWs;
          return strip_chars(s, set, m != "rstrip", m != "lstrip");
        }
        if (m == "startswith" || m == "endswith") {
          V arg = kwarg(e, "prefix", 0, "");
          std::vector<std::string> cands;
          if (arg.is_array()) for (const auto& x : arg) cands.push_back(to_text(x));
          else cands.push_back(to_text(arg));
          for (const auto& c : cands) {
            if (m == "startswith" ? s.rfind(c, 0) == 0 : (s.size() >= c.size() && s.compare(s.size() - c.size(), c.size(), c) == 0)) return true;
          }
          return false;
        }
        if (m == "upper" || m == "lower" || m == "title" || m == "capitalize") {
          return apply_filter(m, s, [](const std::string&, std::size_t, V dflt) { return dflt; }, e.line);
        }
        if (m == "replace") return replace_all(s, to_text(kwarg(e, "old", 0, "")), to_text(kwarg(e, "new", 1, "")));
        if (m == "split") {
          V sep = kwarg(e, "sep", 0, nullptr);
          const long long maxsplit = as_int(kwarg(e, "maxsplit", 1, -1), e.line);
          V out = V::array();
          if (!sep.is_string()) {
            std::istringstream in(s);
            std::string w;
            while (in >> w) out.push_back(w);
            return out;
          }
          const std::string d = sep.get<std::string>();
          if (d.empty()) type_error(e.line, "split() with an empty separator");
          std::size_t pos = 0;
          long long splits = 0;
          for (std::size_t hit; (maxsplit < 0 || splits < maxsplit) && (hit = s.find(d, pos)) != std::string::npos; ++splits) {
            out.push_back(s.substr(pos, hit - pos));
            pos = hit + d.size();
          }
          out.push_back(s.substr(pos));
          return out;
        }
        type_error(e.line, "unsupported string method '" + m + "()'");
      }
      if (obj.is_object()) {
        if (m == "items") {
          V out = V::array();
          for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(V::array({it.key(), *it}));
          return out;
        }
        if (m == "keys") {
          V out = V::array();
          for (auto it = obj.begin(); it != obj.end(); ++it) out.push_back(it.key());
          return out;
        }
        if (m == "values") {
          V out = V::array();
          for (const auto& x : obj) out.push_back(x);
          return out;
        }
        if (m == "get") {
          V k = kwarg(e, "key", 0, nullptr);
          V r = k.is_string() && obj.contains(k.get<std::string>()) ? obj[k.get<std::string>()] : undefined();
          return is_undef(r) ? kwarg(e, "default", 1, nullptr) : r;
        }
      }
      type_error(e.line, "unsupported method '" + m + "()' on " + python_repr(obj).substr(0, 60));
    }
    if (e.a->kind == Expr::var) {
      const std::string& fn = e.a->name;
      if (fn == "raise_exception") throw RaiseException{to_text(kwarg(e, "message", 0, "raise_exception called"))};
      if (fn == "namespace") {
        V ns = V::object();
        for (const auto& [k, x] : e.kwargs) ns[k] = eval(*x);
        charge(check_value_size(ns, e.line, "a namespace"), e.line);
        return ns;
      }
      if (fn == "range") {
        long long lo = 0, hi = 0, step = 1;
        if (e.args.size() == 1) hi = as_int(eval(*e.args[0]), e.line);
        else if (e.args.size() >= 2) {
          lo = as_int(eval(*e.args[0]), e.line);
          hi = as_int(eval(*e.args[1]), e.line);
          if (e.args.size() == 3) step = as_int(eval(*e.args[2]), e.line);
        }
        if (step == 0) type_error(e.line, "range() step cannot be zero");
        V out = V::array();
        for (long long i = lo; step > 0 ? i < hi : i > hi;) {
          out.push_back(i);
          if (out.size() > kMaxValueElements) type_error(e.line, "range() longer than " + std::to_string(kMaxValueElements) + " items");
          if (__builtin_add_overflow(i, step, &i)) break;  // past the int64 range: past hi as well
        }
        return out;
      }
      if (fn == "strftime_now") return "";
      type_error(e.line, "unsupported function '" + fn + "()'");
    }
    type_error(e.line, "unsupported call expression");
  }

  /// f(), with the template line put into the errors of the value helpers that have none
  /// (replace(), tojson: jinja_value.cpp throws "chat template: ...").
  template <class F>
  static V at_line(int line, F&& f) {
    try {
      return f();
    } catch (const TemplateError& err) {
      constexpr std::string_view kBare = "chat template: ";
      const std::string_view what = err.what();
      if (what.substr(0, kBare.size()) == kBare) fail(line, std::string(what.substr(kBare.size())));
      throw;
    }
  }

  /// The value a variable or an attribute chain of one (`message.content`, `loop.index0`) names,
  /// without copying it; null when `e` is anything else or names nothing. Real templates index
  /// `messages[loop.index0 - 1]` inside the loop over the messages: copying the whole list per
  /// reference made that quadratic. Valid until the scopes change (not during an expression).
  const V* find_ref(const Expr& e) const {
    if (e.kind == Expr::var) {
      for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
        auto f = it->find(e.name);
        if (f != it->end()) return &*f;
      }
      return nullptr;
    }
    if (e.kind == Expr::attr) {
      const V* obj = find_ref(*e.a);
      if (!obj || !obj->is_object()) return nullptr;
      auto it = obj->find(e.name);
      return it == obj->end() ? nullptr : &*it;
    }
    return nullptr;
  }

  /// eval_node, charged to the work budget; a string or container past the size limits fails here,
  /// where it was made, naming the template line.
  V eval(const Expr& e) {
    V v = eval_node(e);
    std::size_t size = 0;
    if (v.is_string()) {
      size = v.get_ref<const std::string&>().size();
      if (size > kMaxValueText) type_error(e.line, "a string longer than " + std::to_string(kMaxValueText) + " bytes");
    } else if (v.is_array() || v.is_object()) {
      if (v.size() > kMaxValueElements) type_error(e.line, "a list or dict of more than " + std::to_string(kMaxValueElements) + " items");
      // Every level: a variable reference copies the whole value (a loop reading a big nested
      // value would otherwise cost one unit per copy).
      size = 64 * deep_elements(v, kMaxWork);  // a unit per element: copying one costs ~50 ns, ~1 us under ASan
    }
    charge(1 + size / 64, e.line);
    return v;
  }

  V eval_node(const Expr& e) {
    switch (e.kind) {
      case Expr::literal: return e.value;
      case Expr::var: return lookup(e.name);
      case Expr::attr: {
        V copy;
        const V* obj = find_ref(*e.a);
        if (!obj) obj = &(copy = eval(*e.a));
        if (obj->is_object()) {
          auto it = obj->find(e.name);
          return it == obj->end() ? undefined() : *it;
        }
        return undefined();
      }
      case Expr::index: {
        V copy;
        const V* obj = find_ref(*e.a);
        if (!obj) obj = &(copy = eval(*e.a));
        return subscript(*obj, eval(*e.b), e.line);
      }
      case Expr::slice: return slice(eval(*e.a), e);
      case Expr::call: return at_line(e.line, [&] { return call(e); });
      case Expr::filter: return at_line(e.line, [&] { return filter(e); });
      case Expr::test: return test(e);
      case Expr::neg: {
        V v = eval(*e.a);
        if (v.is_number_integer()) return int_op('-', 0, v.get<long long>(), e.line);
        if (v.is_number()) return -v.get<double>();
        type_error(e.line, "unary '-' on " + python_repr(v));
      }
      case Expr::not_: return !truthy(eval(*e.a));
      case Expr::binary: return binary(e);
      case Expr::cond: return truthy(eval(*e.b)) ? eval(*e.a) : (e.c ? eval(*e.c) : V(""));
      case Expr::list: {
        V out = V::array();
        for (const auto& x : e.args) out.push_back(eval(*x));
        charge(check_value_size(out, e.line, "a list"), e.line);  // [a, a] doubles and [a] nests through every level
        return out;
      }
      case Expr::dict: {
        V out = V::object();
        for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) out[to_text(eval(*e.args[i]))] = eval(*e.args[i + 1]);
        charge(check_value_size(out, e.line, "a dict"), e.line);
        return out;
      }
    }
    return undefined();
  }

  std::vector<V> scopes_;
  std::size_t work_ = 0;  ///< charged so far (kMaxWork)
};

}  // namespace

std::string render_nodes(const std::vector<Node>& nodes, const V& context) {
  std::string out;
  Evaluator(context).run(nodes, out);
  return out;
}

}  // namespace atlas::chat::jinja
