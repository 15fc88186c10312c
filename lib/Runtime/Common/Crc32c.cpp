//===- Crc32c.cpp - CRC-32C (Castagnoli), the checkpoints' checksum -------===//
//
// The CRC of iSCSI, ext4 and gRPC: reflected polynomial 0x82F63B78, initial
// value and final XOR 0xFFFFFFFF; crc32c("123456789") = 0xE3069283.
// python/zeroc/checkpoint.py computes the same. The SSE4.2 instruction
// (about 8 GB/s, well above a disk) where the processor has it, else
// slicing-by-8 tables (about 1-2 GB/s).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <cstdio>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define ZEROC_CRC32C_SSE42 1
#endif

namespace zeroc::rt::ckpt {

namespace {

struct Tables {
  uint32_t table[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t crc = i;
      for (int bit = 0; bit < 8; ++bit)
        crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
      table[0][i] = crc;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int k = 1; k < 8; ++k)
        table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
  }
};

uint32_t softwareUpdate(uint32_t crc, const uint8_t *bytes, size_t size) {
  static const Tables tables;
  const auto &t = tables.table;
  while (size >= 8) {
    uint32_t low, high;
    std::memcpy(&low, bytes, 4);
    std::memcpy(&high, bytes + 4, 4);
    low ^= crc; // little-endian hosts only (every host zeroc runs on)
    crc = t[7][low & 0xFF] ^ t[6][(low >> 8) & 0xFF] ^
          t[5][(low >> 16) & 0xFF] ^ t[4][low >> 24] ^ t[3][high & 0xFF] ^
          t[2][(high >> 8) & 0xFF] ^ t[1][(high >> 16) & 0xFF] ^
          t[0][high >> 24];
    bytes += 8;
    size -= 8;
  }
  while (size--)
    crc = (crc >> 8) ^ t[0][(crc ^ *bytes++) & 0xFF];
  return crc;
}

#ifdef ZEROC_CRC32C_SSE42
__attribute__((target("sse4.2"))) uint32_t
hardwareUpdate(uint32_t crc, const uint8_t *bytes, size_t size) {
  uint64_t wide = crc;
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    wide = _mm_crc32_u64(wide, word);
    bytes += 8;
    size -= 8;
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  while (size--)
    narrow = _mm_crc32_u8(narrow, *bytes++);
  return narrow;
}

bool haveSse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

} // namespace

uint32_t crc32c(uint32_t crc, const void *data, size_t size) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  uint32_t state = ~crc;
#ifdef ZEROC_CRC32C_SSE42
  if (haveSse42())
    return ~hardwareUpdate(state, bytes, size);
#endif
  return ~softwareUpdate(state, bytes, size);
}

namespace {

// zlib's crc32_combine, for the CRC-32C polynomial: the CRC of A followed by
// B from the CRCs of A and B, by applying len(B) zero bytes to crc(A) with
// squared GF(2) matrices (about log2(len) 32x32 products).
uint32_t matrixTimes(const uint32_t *matrix, uint32_t vector) {
  uint32_t sum = 0;
  for (; vector; vector >>= 1, ++matrix)
    if (vector & 1)
      sum ^= *matrix;
  return sum;
}

void matrixSquare(uint32_t *square, const uint32_t *matrix) {
  for (int n = 0; n < 32; ++n)
    square[n] = matrixTimes(matrix, matrix[n]);
}

} // namespace

uint32_t crc32cCombine(uint32_t first, uint32_t second, uint64_t secondBytes) {
  if (secondBytes == 0)
    return first;
  uint32_t even[32], odd[32];
  odd[0] = 0x82F63B78u; // one zero bit
  for (int n = 1; n < 32; ++n)
    odd[n] = 1u << (n - 1);
  matrixSquare(even, odd); // two zero bits
  matrixSquare(odd, even); // four
  do {
    matrixSquare(even, odd); // one zero byte, then 4, 16, ...
    if (secondBytes & 1)
      first = matrixTimes(even, first);
    secondBytes >>= 1;
    if (!secondBytes)
      break;
    matrixSquare(odd, even);
    if (secondBytes & 1)
      first = matrixTimes(odd, first);
    secondBytes >>= 1;
  } while (secondBytes);
  return first ^ second;
}

std::string crcHex(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", crc);
  return text;
}

} // namespace zeroc::rt::ckpt
