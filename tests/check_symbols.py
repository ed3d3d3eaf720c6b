#!/usr/bin/env python3
"""check_symbols.py — fails when a shared library exports anything but simdpool_*.

Reads the ELF dynamic symbol table (.dynsym with its .dynstr) of each library
given on the command line itself, without nm or readelf, so it works on any
ELF64/ELF32 target of either byte order (the aarch64 cross build included).
Every defined (st_shndx != SHN_UNDEF) GLOBAL, WEAK or GNU_UNIQUE symbol must
start with the prefix (default "simdpool_"); the exported list is printed.
With --header, every function a header marks SIMDPOOL_API must also be
exported by one of the libraries (a definition that does not see its
declaration would otherwise be hidden silently).

Usage: check_symbols.py [--prefix P] [--header H ...] LIB.so [LIB.so ...]
Exit status: 0 when every library is clean, 1 otherwise.
"""

import argparse
import re
import struct
import sys

SHT_DYNSYM = 11
SHN_UNDEF = 0
STB_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "UNIQUE"}
STT_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE",
             5: "COMMON", 6: "TLS", 10: "IFUNC"}


class ElfError(Exception):
    pass


def dynamic_symbols(path):
    """Yields (name, bind, type, shndx) for every entry of .dynsym."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    ei_class, ei_data = data[4], data[5]
    if ei_class not in (1, 2) or ei_data not in (1, 2):
        raise ElfError("unknown ELF class %d or data encoding %d"
                       % (ei_class, ei_data))
    is64 = ei_class == 2
    end = "<" if ei_data == 1 else ">"

    # ELF header: section header table offset, entry size, count, .shstrndx.
    if is64:
        e_shoff, = struct.unpack_from(end + "Q", data, 0x28)
        e_shentsize, e_shnum = struct.unpack_from(end + "HH", data, 0x3A)
    else:
        e_shoff, = struct.unpack_from(end + "I", data, 0x20)
        e_shentsize, e_shnum = struct.unpack_from(end + "HH", data, 0x2E)
    if e_shoff == 0 or e_shnum == 0:
        raise ElfError("no section headers")

    # Section headers: (type, offset, size, link, entsize).
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        if is64:
            (_, sh_type, _, _, sh_offset, sh_size, sh_link, _, _,
             sh_entsize) = struct.unpack_from(end + "IIQQQQIIQQ", data, off)
        else:
            (_, sh_type, _, _, sh_offset, sh_size, sh_link, _, _,
             sh_entsize) = struct.unpack_from(end + "IIIIIIIIII", data, off)
        sections.append((sh_type, sh_offset, sh_size, sh_link, sh_entsize))

    dynsyms = [s for s in sections if s[0] == SHT_DYNSYM]
    if not dynsyms:
        raise ElfError("no .dynsym section (not a shared library?)")
    _, sym_off, sym_size, link, entsize = dynsyms[0]
    _, str_off, str_size, _, _ = sections[link]
    strtab = data[str_off:str_off + str_size]
    if entsize == 0:
        entsize = 24 if is64 else 16

    for i in range(1, sym_size // entsize):  # entry 0 is the null symbol
        off = sym_off + i * entsize
        if is64:
            st_name, st_info, _, st_shndx = struct.unpack_from(
                end + "IBBH", data, off)
        else:
            st_name, = struct.unpack_from(end + "I", data, off)
            st_info, _, st_shndx = struct.unpack_from(end + "BBH", data,
                                                      off + 12)
        nul = strtab.find(b"\0", st_name)
        name = strtab[st_name:nul if nul >= 0 else len(strtab)].decode(
            "utf-8", "replace")
        yield name, st_info >> 4, st_info & 0xF, st_shndx


def header_api(path):
    """The function names a header declares with SIMDPOOL_API."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    # Drop preprocessor directives (with their continuation lines).
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return set(re.findall(r"\bSIMDPOOL_API\b[^;{]*?\b(\w+)\s*\(", text))


def check(path, prefix, seen):
    """Prints the exported symbols of path and adds them to seen; returns the
    offending ones."""
    exported, bad = [], []
    for name, bind, typ, shndx in dynamic_symbols(path):
        if shndx == SHN_UNDEF or bind not in (1, 2, 10):
            continue
        exported.append((name, bind, typ))
        seen.add(name)
        if not name.startswith(prefix):
            bad.append(name)
    print("%s: %d exported symbols" % (path, len(exported)))
    for name, bind, typ in sorted(exported):
        print("  %-6s %-6s %s%s" % (STB_NAMES.get(bind, bind),
                                    STT_NAMES.get(typ, typ), name,
                                    "" if name.startswith(prefix)
                                    else "   <-- not " + prefix + "*"))
    if not exported:
        bad.append("(no exported symbols at all)")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="simdpool_",
                    help="required prefix of every exported symbol")
    ap.add_argument("--header", action="append", default=[],
                    help="public header whose SIMDPOOL_API functions must "
                    "all be exported (repeatable)")
    ap.add_argument("libs", nargs="+", help="shared libraries to check")
    args = ap.parse_intermixed_args()
    failed = False
    seen = set()
    for lib in args.libs:
        try:
            bad = check(lib, args.prefix, seen)
        except (OSError, ElfError, struct.error) as e:
            print("%s: cannot read the dynamic symbols: %s" % (lib, e))
            failed = True
            continue
        if bad:
            failed = True
            shown = ", ".join(sorted(bad)[:20])
            if len(bad) > 20:
                shown += ", ... (%d more, marked above)" % (len(bad) - 20)
            print("%s: FAIL: %d exported symbol(s) without the prefix %r: %s"
                  % (lib, len(bad), args.prefix, shown))
        else:
            print("%s: ok: only %s* symbols are exported" % (lib, args.prefix))
    for header in args.header:
        api = header_api(header)
        missing = sorted(api - seen)
        if not api:
            failed = True
            print("%s: FAIL: declares no SIMDPOOL_API function" % header)
        elif missing:
            failed = True
            print("%s: FAIL: %d SIMDPOOL_API function(s) not exported: %s"
                  % (header, len(missing), ", ".join(missing)))
        else:
            print("%s: ok: all %d SIMDPOOL_API functions are exported"
                  % (header, len(api)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
