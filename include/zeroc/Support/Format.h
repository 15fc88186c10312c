//===- Format.h - number formatting shared by reports and the runtime -----===//
//
// Header-only and dependency-free: the compiler's memory report and the
// executables' summaries print figures the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_FORMAT_H
#define ZEROC_SUPPORT_FORMAT_H

#include <cstdint>
#include <string>

namespace zeroc {

/// 175181291520 -> "175,181,291,520".
inline std::string withCommas(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

} // namespace zeroc

#endif // ZEROC_SUPPORT_FORMAT_H
