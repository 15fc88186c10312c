#!/usr/bin/env python3
"""Lists the __global__ kernels in the device code of an executable or object.

cuobjdump is not part of the CUDA installation the CI machines have, so the
tests read the device code themselves: nvcc (with -no-compress, as zeroc
passes it) embeds each GPU architecture's code as an uncompressed cubin, an
ELF file for EM_CUDA, inside the host binary's .nv_fatbin section. A kernel
entry is a FUNC symbol with STO_CUDA_ENTRY (0x10) in st_other.

Usage: fatbin_kernels.py BINARY   prints "sm_XX NAME" per kernel (mangled)
"""

import struct
import sys

EM_CUDA = 190
STT_FUNC = 2
STO_CUDA_ENTRY = 0x10


def section_bytes(elf, name):
    """The bytes of the named section of a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
               for i in range(shnum)]
    names = headers[shstrndx]
    for h in headers:
        start = names[4] + h[0]
        section_name = elf[start:elf.index(b"\0", start)].decode()
        if section_name == name:
            return elf[h[4]:h[4] + h[5]]
    return None


def cubin_kernels(cubin):
    """(architecture, entry names) of one cubin."""
    machine, = struct.unpack_from("<H", cubin, 0x12)
    if machine != EM_CUDA:
        return None, []
    flags, = struct.unpack_from("<I", cubin, 0x30)
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
               for i in range(shnum)]
    kernels = []
    for h in headers:
        if h[1] != 2:  # SHT_SYMTAB
            continue
        strtab = headers[h[6]]
        for off in range(h[4], h[4] + h[5], 24):
            st_name, st_info, st_other = struct.unpack_from("<IBB", cubin, off)
            # Kernels in an anonymous namespace are local symbols.
            if (st_info & 0xF) == STT_FUNC and st_other & STO_CUDA_ENTRY:
                start = strtab[4] + st_name
                kernels.append(cubin[start:cubin.index(b"\0", start)].decode())
    # The architecture (0x5a = sm_90) is e_flags' second byte from ELF ABI
    # version 8 on (CUDA 12.8+), its low byte before.
    arch = (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF
    return "sm_%d" % arch, kernels


def main():
    data = open(sys.argv[1], "rb").read()
    fatbin = section_bytes(data, ".nv_fatbin")
    if fatbin is None:
        sys.exit("%s: no .nv_fatbin section (no device code)" % sys.argv[1])
    found = 0
    at = fatbin.find(b"\x7fELF")
    while at >= 0:
        arch, kernels = cubin_kernels(fatbin[at:])
        for kernel in kernels:
            print(arch, kernel)
            found += 1
        at = fatbin.find(b"\x7fELF", at + 4)
    if not found:
        sys.exit("%s: no kernels in .nv_fatbin (compressed? zeroc passes "
                 "-no-compress)" % sys.argv[1])


if __name__ == "__main__":
    main()
