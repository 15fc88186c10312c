//===- TraceHook.cpp - print the --trace sites of a step ------------------===//

#include "TraceHook.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"

using namespace mlir;
using namespace zeroc::train;

namespace zeroc::cpp {

namespace {

std::string literal(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

/// The site an op of the planned step carries: a train.kernel's is its
/// op's (a train.fused's for a fused loop).
DictionaryAttr siteOf(Operation *op) {
  TrainDialect &dialect = TrainDialect::get(op->getContext());
  if (auto kernel = dyn_cast<KernelOp>(op)) {
    Operation *inner = kernel.getSingleOp();
    return inner ? dialect.getTraceAttrHelper().getAttr(inner)
                 : DictionaryAttr();
  }
  if (isa<CollectiveStartOp, CollectiveWaitOp>(op))
    return dialect.getTraceAttrHelper().getAttr(op);
  return {};
}

std::string text(DictionaryAttr site, StringRef key) {
  auto value = dyn_cast_or_null<StringAttr>(site.get(key));
  return literal(value ? value.getValue() : "");
}

std::string number(DictionaryAttr site, StringRef key) {
  auto value = dyn_cast_or_null<IntegerAttr>(site.get(key));
  return std::to_string(value ? value.getInt() : 0);
}

} // namespace

TraceHook::Scope::Scope(TraceHook &hook, std::string &text, Operation *op,
                        bool enabled)
    : hook(hook), text(text), op(op), enabled(enabled), start(text.size()) {}

TraceHook::Scope::~Scope() {
  if (!enabled || text.size() == start ||
      text.find(';', start) == std::string::npos)
    return; // nothing runs: a view, a comment
  DictionaryAttr site = siteOf(op);
  if (!site)
    return;
  std::string var = "zc_t" + std::to_string(hook.nextSite++);
  const char *begin = "begin", *end = "end";
  if (isa<CollectiveWaitOp>(op)) {
    begin = "wait_begin";
    end = "wait_end";
  } else if (isa<CollectiveStartOp>(op)) {
    begin = "collective_begin";
    end = "collective_end";
  }
  std::string prefix =
      "  static const zrt_trace_site " + var + " = {" +
      ::zeroc::cpp::text(site, "name") + ", " +
      ::zeroc::cpp::text(site, "kind") + ", " +
      ::zeroc::cpp::text(site, "phase") + ", " +
      ::zeroc::cpp::text(site, "location") + ", " +
      number(site, "collective") + ", " + number(site, "collective_kind") +
      ", " + number(site, "elements") + ", " + number(site, "bytes") +
      "};\n  ZRT_TRACE(" + begin + ", " + var + ");\n";
  text.insert(start, prefix);
  text += std::string("  ZRT_TRACE(") + end + ", " + var + ");\n";
}

} // namespace zeroc::cpp
