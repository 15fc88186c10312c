//===- TrainDialect.cpp - the train dialect -------------------------------===//

#include "zeroc/Dialect/Train/IR/TrainDialect.h"
#include "zeroc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zeroc::train;

#include "zeroc/Dialect/Train/IR/TrainOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zeroc/Dialect/Train/IR/TrainOpsTypes.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "zeroc/Dialect/Train/IR/TrainAttributes.cpp.inc"

void TrainDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zeroc/Dialect/Train/IR/TrainAttributes.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "zeroc/Dialect/Train/IR/TrainOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "zeroc/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}

Operation *TrainDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  auto splat = dyn_cast<SplatElementsAttr>(value);
  if (!splat || !isa<RankedTensorType>(type) ||
      !isa<FloatType>(splat.getElementType())) {
    // Any other tensor constant (a folded train.constant) stays one.
    auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value);
    if (!dense || dense.getType() != type)
      return nullptr;
    return ConstantOp::create(builder, loc, dense);
  }
  double fill = splat.getSplatValue<APFloat>().convertToDouble();
  return FillOp::create(builder, loc, type, builder.getF64FloatAttr(fill));
}

TrainDialect &TrainDialect::get(MLIRContext *context) {
  auto *dialect = context->getLoadedDialect<TrainDialect>();
  assert(dialect && "the train dialect is not loaded");
  return *dialect;
}

/// module: the parameters the model has under a second name (a tied
/// lm_head), {"lm_head.weight" = @transformer.wte.weight}; checkpoints
/// export each such name and --init accepts either (read by the source
/// emitter). Not among the ODS discardable attributes, so that adding it
/// left the dialect's generated declarations unchanged.
static constexpr llvm::StringLiteral kTiedAttrName = "train.tied";

/// Checks `train.buckets` on `op` (see kBucketsAttrName).
static LogicalResult verifyBuckets(Operation *op, Attribute value) {
  auto buckets = dyn_cast<ArrayAttr>(value);
  bool shaped = buckets && !buckets.empty() &&
                llvm::all_of(buckets, [](Attribute bucket) {
                  auto members = dyn_cast<ArrayAttr>(bucket);
                  return members && !members.empty() &&
                         llvm::all_of(members, [](Attribute a) {
                           return isa<FlatSymbolRefAttr>(a);
                         });
                });
  if (!isa<ModuleOp>(op))
    return op->emitError("'") << kBucketsAttrName
                              << "' belongs on the module, not on '"
                              << op->getName() << "'";
  if (!shaped)
    return op->emitError("'")
           << kBucketsAttrName
           << "' must be a non-empty array of non-empty arrays of parameter "
              "symbols ([[@a, @b], [@c]]), got "
           << value;
  SymbolTable symbols(op);
  llvm::StringSet<> seen;
  for (auto [k, bucket] : llvm::enumerate(buckets)) {
    Type element;
    for (Attribute member : cast<ArrayAttr>(bucket)) {
      StringRef name = cast<FlatSymbolRefAttr>(member).getValue();
      auto param = symbols.lookup<ParamOp>(name);
      if (!param)
        return op->emitError("'") << kBucketsAttrName << "' bucket " << k
                                  << " names @" << name
                                  << ", which is not a train.param";
      if (!seen.insert(name).second)
        return op->emitError("'") << kBucketsAttrName << "' names @" << name
                                  << " in more than one place";
      // The module's attributes are verified before its ops: the param's
      // type may still be one its own verifier rejects (an unranked tensor).
      auto shaped = dyn_cast<ShapedType>(param.getTypeAttr().getValue());
      if (!shaped)
        continue;
      Type type = shaped.getElementType();
      if (element && type != element)
        return op->emitError("'")
               << kBucketsAttrName << "' bucket " << k << " mixes " << element
               << " and " << type << " (@" << name
               << "): a bucket holds one element type";
      element = type;
    }
  }
  return success();
}

LogicalResult TrainDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  auto expect = [&](bool onRightOp, StringRef where, bool rightType,
                    StringRef type) -> LogicalResult {
    if (!onRightOp)
      return op->emitError("'") << name << "' belongs on " << where << ", not on '"
                                << op->getName() << "'";
    if (!rightType)
      return op->emitError("'") << name << "' must be " << type << ", got "
                                << value;
    return success();
  };
  bool isFunc = isa<func::FuncOp>(op), isModule = isa<ModuleOp>(op);
  auto positive = [&](int64_t min) {
    auto integer = dyn_cast<IntegerAttr>(value);
    return integer && integer.getType().isInteger(64) && integer.getInt() >= min;
  };
  if (name == getForwardAttrHelper().getName() ||
      name == getStepAttrHelper().getName() ||
      name == getLogitsAttrHelper().getName() ||
      name == getPlannedAttrHelper().getName())
    return expect(isFunc, "a func.func", isa<UnitAttr>(value), "a unit attribute");
  if (name == getGradientsAttrHelper().getName()) {
    auto array = dyn_cast<ArrayAttr>(value);
    bool symbols = array && llvm::all_of(array, [](Attribute a) {
                     return isa<FlatSymbolRefAttr>(a);
                   });
    return expect(isFunc, "a func.func", symbols,
                  "an array of parameter symbols (@name)");
  }
  if (name == getBatchSplitAttrHelper().getName() ||
      name == getWorldSizeAttrHelper().getName())
    return expect(isModule, "the module", positive(1),
                  "a positive 64-bit integer");
  if (name == getZeroStageAttrHelper().getName()) {
    auto integer = dyn_cast<IntegerAttr>(value);
    return expect(isModule, "the module",
                  positive(0) && integer.getInt() <= 3,
                  "a 64-bit integer in [0, 3]");
  }
  if (name == getMicroBatchesAttrHelper().getName() ||
      name == getGradAccumAttrHelper().getName())
    return expect(isModule, "the module", positive(1),
                  "a positive 64-bit integer");
  if (name == getMicroBatchAttrHelper().getName())
    return expect(op->getParentOfType<func::FuncOp>() != nullptr,
                  "an op of a function", positive(0),
                  "a non-negative 64-bit integer");
  if (name == getBatchCountAttrHelper().getName())
    return expect(isa<SumOp>(op), "a train.sum", positive(0),
                  "a non-negative 64-bit integer");
  if (name == getAccumulateAttrHelper().getName())
    return expect(op->getParentOfType<func::FuncOp>() != nullptr,
                  "an op of a function", isa<UnitAttr>(value),
                  "a unit attribute");
  if (name == getModelAttrHelper().getName())
    return expect(isModule, "the module", isa<StringAttr>(value), "a string");
  if (name == kTiedAttrName) {
    auto tied = dyn_cast<DictionaryAttr>(value);
    bool symbols = tied && llvm::all_of(tied, [](NamedAttribute entry) {
                     return isa<FlatSymbolRefAttr>(entry.getValue());
                   });
    if (failed(expect(isModule, "the module", symbols,
                      "a dictionary of names to parameter symbols "
                      "({\"lm_head.weight\" = @transformer.wte.weight})")))
      return failure();
    for (NamedAttribute entry : tied) {
      StringRef target = cast<FlatSymbolRefAttr>(entry.getValue()).getValue();
      Operation *param = SymbolTable::lookupSymbolIn(op, target);
      if (!param || !isa<ParamOp>(param))
        return op->emitError("'")
               << name << "' ties '" << entry.getName().getValue() << "' to @"
               << target << ", which is not a train.param of the module";
      StringRef alias = entry.getName().getValue();
      if (alias.empty() || llvm::any_of(alias, [](char c) {
            return c == '"' || c == '\\' || !llvm::isPrint(c);
          }))
        return op->emitError("'") << name << "' has a name that is empty or "
                                      "not printable without escapes";
      if (SymbolTable::lookupSymbolIn(op, entry.getName().getValue()))
        return op->emitError("'")
               << name << "' ties '" << entry.getName().getValue()
               << "', which is a symbol of the module already";
    }
    return success();
  }
  if (name == kBucketsAttrName)
    return verifyBuckets(op, value);
  if (name == kEmplaceAttrName) {
    auto operands = dyn_cast<DenseI64ArrayAttr>(value);
    bool inRange = operands && llvm::all_of(operands.asArrayRef(), [&](int64_t i) {
                     return i >= 0 && i < op->getNumOperands();
                   });
    return expect(isa<PackOp, WriteOp, AllGatherStartOp,
                      StateUpdateOpInterface>(op),
                  "a train.pack, train.write, train.all_gather_start or "
                  "optimizer update",
                  inRange, "an array of the op's operand numbers");
  }
  if (name == kIntoAttrName)
    return expect(isa<PackOp, AllGatherStartOp>(op),
                  "a train.pack or train.all_gather_start",
                  isa<FlatSymbolRefAttr>(value), "a train.buffer symbol (@name)");
  if (name == kCopyAttrName)
    return expect(isa<ReadOp>(op), "a train.read", isa<UnitAttr>(value),
                  "a unit attribute");
  if (name == getCategoryAttrHelper().getName())
    return expect(isa<memref::AllocOp>(op), "a memref.alloc",
                  isa<MemoryCategoryAttr>(value),
                  "a memory category (#train.category<...>)");
  if (name == getRecomputedAttrHelper().getName())
    return expect(op->getParentOfType<func::FuncOp>() != nullptr,
                  "an op of a function", isa<UnitAttr>(value),
                  "a unit attribute");
  if (name == getRematAttrHelper().getName()) {
    auto policy = dyn_cast<StringAttr>(value);
    return expect(isModule, "the module",
                  policy && llvm::is_contained(
                                std::initializer_list<StringRef>{
                                    "none", "full", "selective"},
                                policy.getValue()),
                  "none, full or selective");
  }
  if (name == getTraceAttrHelper().getName()) {
    auto site = dyn_cast<DictionaryAttr>(value);
    bool fields = site && llvm::all_of(std::initializer_list<StringRef>{
                                           "name", "kind", "phase", "location"},
                                       [&](StringRef key) {
                                         return isa_and_nonnull<StringAttr>(
                                             site.get(key));
                                       }) &&
                  llvm::all_of(std::initializer_list<StringRef>{
                                   "collective", "collective_kind", "elements",
                                   "bytes"},
                               [&](StringRef key) {
                                 return isa_and_nonnull<IntegerAttr>(
                                     site.get(key));
                               });
    return expect(op->getParentOfType<func::FuncOp>() != nullptr,
                  "an op of a function", fields,
                  "a trace site: a dictionary of strings name, kind, phase, "
                  "location and integers collective, collective_kind, "
                  "elements, bytes");
  }
  return op->emitError("'") << name
                            << "' is not an attribute of the train dialect "
                               "(see the dialect's reference for the list)";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 RankedTensorType valueType) {
  if (!valueType.hasStaticShape())
    return emitError() << "a future's value must have a static shape, got "
                       << valueType;
  return success();
}

