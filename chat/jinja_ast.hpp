#pragma once
// The parsed template: expressions (Expr) and statements (Node) with their source lines.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.hpp"

namespace atlas::chat::jinja {

struct Expr;
using ExprP = std::unique_ptr<Expr>;
struct Expr {
  enum Kind { literal, var, attr, index, slice, call, filter, test, neg, not_, binary, cond, list, dict } kind;
  int line = 0;
  V value;                 // literal
  std::string name;        // var, attr, call(method/function), filter, test, binary op
  ExprP a, b, c;           // operands (slice: a[b:c], step in args[0])
  std::vector<ExprP> args;
  std::vector<std::pair<std::string, ExprP>> kwargs;
  bool negated = false;    // `is not`
  int depth = 1;           // levels of the tree below and including this node (the parser bounds it)
};

inline ExprP make(Expr::Kind k, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->line = line;
  return e;
}

struct Node {
  enum Kind { text, output, if_, for_, set } kind = text;
  int line = 0;
  std::string raw;
  ExprP expr;                                                 // output, set value, for iterable
  std::vector<std::pair<ExprP, std::vector<Node>>> branches;  // if / elif
  std::vector<Node> else_body;                                // if, for
  std::vector<std::string> targets;                           // for targets; set: name [, attr]
  ExprP loop_filter;                                          // for ... if cond
  std::vector<Node> body;                                     // for
};

}  // namespace atlas::chat::jinja
