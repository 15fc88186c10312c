//===- RuntimeAbi.h - zrt.h's tables, as the emitter spells them -*- C++ -*-===//
//
// The generated source names zrt.h's enumerators (ZRT_F32, ZRT_TRANS,
// ZRT_MEM_ACTIVATIONS, ...), never their values. The dtype rows come from
// zrt.h's ZRT_DTYPES table itself, so the runtime and the emitter cannot
// disagree on a dtype's enumerator or C type.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_TARGET_CPP_RUNTIMEABI_H
#define ZEROC_LIB_TARGET_CPP_RUNTIMEABI_H

#include "zeroc/Runtime/zrt.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace zeroc::cpp {

/// One row of zrt.h's dtype table, as source text.
struct DtypeRow {
  const char *enumerator; ///< "ZRT_F32"
  const char *cType;      ///< "float" (bf16: "uint16_t")
  const char *name;       ///< "f32": the MLIR element type's spelling
};

/// The row of `element` (f32, bf16, i32, i64, ...: matched by its MLIR
/// spelling), or null when zrt.h has no such dtype.
inline const DtypeRow *dtypeRow(mlir::Type element) {
  static const DtypeRow rows[] = {
#define ZEROC_DTYPE_ROW_(e, value, ctype, bytes, name, is_float)               \
  {#e, #ctype, name},
      ZRT_DTYPES(ZEROC_DTYPE_ROW_)
#undef ZEROC_DTYPE_ROW_
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << element;
  for (const DtypeRow &row : rows)
    if (text == row.name)
      return &row;
  return nullptr;
}

/// The row of `element`, or the i64 row for other integer types (the
/// emitter's fallback before the table).
inline const DtypeRow &dtypeRowOr64(mlir::Type element) {
  if (const DtypeRow *row = dtypeRow(element))
    return *row;
  static const DtypeRow i64 = {"ZRT_I64", "int64_t", "i64"};
  return i64;
}

/// zrt.h's enumerator of a memory category.
inline const char *memCategoryName(zrt_mem_category category) {
  switch (category) {
  case ZRT_MEM_PARAMETERS:
    return "ZRT_MEM_PARAMETERS";
  case ZRT_MEM_GRADIENTS:
    return "ZRT_MEM_GRADIENTS";
  case ZRT_MEM_OPTIMIZER_STATES:
    return "ZRT_MEM_OPTIMIZER_STATES";
  case ZRT_MEM_GATHERED_PARAMETERS:
    return "ZRT_MEM_GATHERED_PARAMETERS";
  case ZRT_MEM_GRADIENT_BUCKETS:
    return "ZRT_MEM_GRADIENT_BUCKETS";
  case ZRT_MEM_ACTIVATIONS:
  default:
    return "ZRT_MEM_ACTIVATIONS";
  }
}

} // namespace zeroc::cpp

#endif // ZEROC_LIB_TARGET_CPP_RUNTIMEABI_H
