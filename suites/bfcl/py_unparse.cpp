// ast.unparse for the node kinds PyNode models (CPython Lib/ast.py, _Unparser): used where BFCL
// turns a call without keyword arguments, or a subscript, into its source text (spec §2.2 7).
#include <cmath>

#include "suites/bfcl/py_ast.hpp"

namespace atlas::suites::bfcl {

namespace {

// CPython's _Precedence, lowest first.
enum Prec { P_TUPLE = 1, P_TEST = 3, P_OR, P_AND, P_NOT, P_CMP, P_EXPR, P_BOR = P_EXPR, P_BXOR, P_BAND, P_SHIFT,
            P_ARITH, P_TERM, P_FACTOR, P_POWER, P_AWAIT, P_ATOM };

int binop_prec(const std::string& op) {
  if (op == "|") return P_BOR;
  if (op == "^") return P_BXOR;
  if (op == "&") return P_BAND;
  if (op == "<<" || op == ">>") return P_SHIFT;
  if (op == "+" || op == "-") return P_ARITH;
  if (op == "**") return P_POWER;
  return P_TERM;  // * / // % @
}

std::string un(const PyNode& n, int ctx);

std::string paren_if(bool cond, const std::string& s) { return cond ? "(" + s + ")" : s; }

/// open + s + close by appends: GCC 12 warns (-Wrestrict, a false positive, GCC PR 105329) on
/// `"[" + std::string&&` at -O2 and above.
std::string wrap(std::string_view open, const std::string& s, std::string_view close) {
  std::string out(open);
  out += s;
  out += close;
  return out;
}

std::string join(const std::vector<PyNode>& kids, std::size_t from, std::size_t to, int ctx) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    if (i > from) out += ", ";
    out += un(kids[i], ctx);
  }
  return out;
}

std::string constant(const PyNode& n) {
  if (n.special == PyConstSpecial::ellipsis) return "...";
  if (n.special != PyConstSpecial::none) return n.text;
  if (n.value.is(PyType::floating)) {
    const double d = std::get<double>(n.value.v);
    if (std::isinf(d)) return d > 0 ? "1e309" : "-1e309";
  }
  return py_repr(n.value);
}

std::string un(const PyNode& n, int ctx) {
  switch (n.kind) {
    case PyNodeKind::empty: return "";
    case PyNodeKind::constant: return constant(n);
    case PyNodeKind::name: return n.text;
    case PyNodeKind::joined_str: return n.text;
    case PyNodeKind::attribute: {
      // visit_Attribute: `1.f` lexes as a malformed float, so an int (or bool) constant gets a
      // space before the dot, as ast.unparse writes `1 .f` (found by fuzz_bfcl_python).
      const PyNode& v = n.kids[0];
      const bool int_constant = v.kind == PyNodeKind::constant && v.special == PyConstSpecial::none &&
                                (v.value.is(PyType::integer) || v.value.is(PyType::boolean));
      return un(v, P_ATOM) + (int_constant ? " ." : ".") + n.text;
    }
    case PyNodeKind::call: {
      std::string out = un(n.kids[0], P_ATOM) + "(";
      const std::size_t nargs = n.call_nargs();
      out += join(n.kids, 1, 1 + nargs, P_TEST);
      for (std::size_t k = 0; k < n.kw_names.size(); ++k) {
        if (nargs > 0 || k > 0) out += ", ";
        const PyNode& v = n.kids[1 + nargs + k];
        out += n.kw_names[k] ? *n.kw_names[k] + "=" + un(v, P_TEST) : "**" + un(v, P_EXPR);
      }
      return out + ")";
    }
    case PyNodeKind::subscript: {
      const PyNode& sl = n.kids[1];
      std::string inner = (sl.kind == PyNodeKind::tuple && !sl.kids.empty())
                              ? join(sl.kids, 0, sl.kids.size(), P_TEST) + (sl.kids.size() == 1 ? "," : "")
                              : un(sl, P_TUPLE);
      return un(n.kids[0], P_ATOM) + "[" + inner + "]";
    }
    case PyNodeKind::slice: {
      std::string out = un(n.kids[0], P_TEST) + ":" + un(n.kids[1], P_TEST);
      if (n.kids[2].kind != PyNodeKind::empty) {
        out += ':';
        out += un(n.kids[2], P_TEST);
      }
      return out;
    }
    case PyNodeKind::list: return wrap("[", join(n.kids, 0, n.kids.size(), P_TEST), "]");
    case PyNodeKind::set: return wrap("{", join(n.kids, 0, n.kids.size(), P_TEST), "}");
    case PyNodeKind::tuple: {
      std::string inner = join(n.kids, 0, n.kids.size(), P_TEST) + (n.kids.size() == 1 ? "," : "");
      return paren_if(n.kids.empty() || ctx > P_TUPLE, inner);
    }
    case PyNodeKind::dict: {
      std::string out = "{";
      for (std::size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        if (i) out += ", ";
        if (n.kids[i].kind == PyNodeKind::empty) out += "**" + un(n.kids[i + 1], P_EXPR);
        else out += un(n.kids[i], P_TEST) + ": " + un(n.kids[i + 1], P_TEST);
      }
      return out + "}";
    }
    case PyNodeKind::starred: return wrap("*", un(n.kids[0], P_EXPR), "");
    case PyNodeKind::unary: {
      if (n.text == "not") return paren_if(ctx > P_NOT, "not " + un(n.kids[0], P_NOT));
      return paren_if(ctx > P_FACTOR, n.text + un(n.kids[0], P_FACTOR));
    }
    case PyNodeKind::binop: {
      const int p = binop_prec(n.text);
      const bool right_assoc = n.text == "**";
      const std::string s = un(n.kids[0], right_assoc ? p + 1 : p) + " " + n.text + " " +
                            un(n.kids[1], right_assoc ? p : p + 1);
      return paren_if(ctx > p, s);
    }
    case PyNodeKind::boolop: {
      const int p = n.text == "and" ? P_AND : P_OR;
      std::string s;
      for (std::size_t i = 0; i < n.kids.size(); ++i) {
        if (i) s += " " + n.text + " ";
        s += un(n.kids[i], p + 1);
      }
      return paren_if(ctx > p, s);
    }
    case PyNodeKind::compare: {
      std::string s = un(n.kids[0], P_CMP + 1);
      for (std::size_t i = 0; i < n.ops.size(); ++i) s += " " + n.ops[i] + " " + un(n.kids[i + 1], P_CMP + 1);
      return paren_if(ctx > P_CMP, s);
    }
    case PyNodeKind::ifexp: {
      const std::string s = un(n.kids[0], P_TEST + 1) + " if " + un(n.kids[1], P_TEST + 1) + " else " +
                            un(n.kids[2], P_TEST);
      return paren_if(ctx > P_TEST, s);
    }
    case PyNodeKind::lambda: {
      const std::string s = "lambda" + (n.text.empty() ? "" : " " + n.text) + ": " + un(n.kids[0], P_TEST);
      return paren_if(ctx > P_TEST, s);
    }
  }
  return "";
}

}  // namespace

std::string unparse(const PyNode& node) { return un(node, P_TEST); }

}  // namespace atlas::suites::bfcl
