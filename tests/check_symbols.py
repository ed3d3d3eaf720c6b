#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_symbols.py — fails when a simdpool library exposes any global symbol but simdpool_*.

Reads the ELF symbol tables itself, without nm or readelf, so it works on any
ELF64/ELF32 target of either byte order (the aarch64 cross build included):
- shared libraries (positional arguments): the dynamic symbol table (.dynsym
  with its .dynstr), i.e. what the library exports;
- static archives and relocatable objects (--static): the symbol table
  (.symtab) of every object (every member of an ar archive, thin or not),
  i.e. the names a program that links the archive can collide with.
Every defined (st_shndx != SHN_UNDEF) GLOBAL, WEAK or GNU_UNIQUE symbol must
start with the prefix (default "simdpool_"); the lists are printed.
With --header, every function a header marks SIMDPOOL_API must also be
exported by one of the shared libraries (a definition that does not see its
declaration would otherwise be hidden silently); --static-header is the same
for the static files. --allow NAME exempts one more name (repeatable): a build
instrumented for libFuzzer (-Dfuzz=true) exports the linker-made bounds of
its coverage sections, __start___sancov_* and __stop___sancov_*.

Usage: check_symbols.py [--prefix P] [--allow NAME ...] [--header H ...]
                        [--static A.a ...] [--static-header H ...] [LIB.so ...]
Exit status: 0 when every file is clean, 1 otherwise.
"""

import argparse
import os
import re
import struct
import sys

SHT_SYMTAB = 2
SHT_DYNSYM = 11
SHN_UNDEF = 0
STB_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "UNIQUE"}
STT_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE",
             5: "COMMON", 6: "TLS", 10: "IFUNC"}


class ElfError(Exception):
    pass


def elf_symbols(data, table):
    """Yields (name, bind, type, shndx) for every entry of the ELF file's
    symbol table of section type `table` (SHT_DYNSYM or SHT_SYMTAB)."""
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

    tables = [s for s in sections if s[0] == table]
    if not tables:
        raise ElfError("no %s section%s" % (
            ".dynsym" if table == SHT_DYNSYM else ".symtab",
            " (not a shared library?)" if table == SHT_DYNSYM else
            " (stripped?)"))
    _, sym_off, sym_size, link, entsize = tables[0]
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


def archive_members(path):
    """Yields (member name, ELF bytes) of an ar archive (GNU/SysV, thin or
    not), or the file itself when it is an ELF object."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"\x7fELF":
        yield os.path.basename(path), data
        return
    thin = data[:8] == b"!<thin>\n"
    if data[:8] != b"!<arch>\n" and not thin:
        raise ElfError("neither an ar archive nor an ELF object")
    pos, long_names = 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        if header[58:60] != b"`\n":
            raise ElfError("bad ar member header at offset %d" % pos)
        name = header[0:16].rstrip(b" ")
        size = int(header[48:58].decode("ascii").strip() or "0")
        body = pos + 60
        pos = body + size + (size & 1)
        if name in (b"/", b"/SYM64/", b"__.SYMDEF", b"__.SYMDEF SORTED"):
            continue  # the symbol index (stored even in a thin archive)
        if name == b"//":
            long_names = data[body:body + size]
            continue
        if name.startswith(b"/") and name[1:].isdigit():
            start = int(name[1:])
            stop = long_names.find(b"/\n", start)
            name = long_names[start:stop if stop >= 0 else len(long_names)]
        elif name.startswith(b"#1/"):  # BSD: the name precedes the data
            n = int(name[3:])
            name, body, size = data[body:body + n].rstrip(b"\0"), body + n, \
                size - n
        else:
            name = name.rstrip(b"/")
        member = name.decode("utf-8", "replace")
        if thin:
            pos = body  # thin members have no data in the archive
            with open(os.path.join(os.path.dirname(path), member), "rb") as f:
                yield member, f.read()
        else:
            yield member, data[body:body + size]


ALLOWED = set()  # --allow: names exempt from the prefix rule


def allowed(name, prefix):
    return name.startswith(prefix) or name in ALLOWED


def report(path, exported, prefix, what):
    """Prints path's defined global symbols; returns the offending ones."""
    bad = [name for name, _, _ in exported if not allowed(name, prefix)]
    print("%s: %d %s" % (path, len(exported), what))
    for name, bind, typ in sorted(exported):
        print("  %-6s %-6s %s%s" % (STB_NAMES.get(bind, bind),
                                    STT_NAMES.get(typ, typ), name,
                                    "" if name.startswith(prefix)
                                    else "   (allowed: --allow)"
                                    if name in ALLOWED
                                    else "   <-- not " + prefix + "*"))
    if not exported:
        bad.append("(no global symbols at all)")
    return bad


def defined_globals(symbols):
    return [(name, bind, typ) for name, bind, typ, shndx in symbols
            if shndx != SHN_UNDEF and bind in (1, 2, 10)]


def check_shared(path, prefix, seen):
    with open(path, "rb") as f:
        exported = defined_globals(elf_symbols(f.read(), SHT_DYNSYM))
    seen.update(name for name, _, _ in exported)
    return report(path, exported, prefix, "exported symbols")


def check_static(path, prefix, seen):
    symbols = []
    for member, data in archive_members(path):
        try:
            symbols += defined_globals(elf_symbols(data, SHT_SYMTAB))
        except (ElfError, struct.error) as e:
            raise ElfError("member %s: %s" % (member, e))
    seen.update(name for name, _, _ in symbols)
    return report(path, symbols, prefix, "global symbols (static)")


def header_api(path):
    """The function names a header declares with SIMDPOOL_API."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    # Drop preprocessor directives (with their continuation lines).
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return set(re.findall(r"\bSIMDPOOL_API\b[^;{]*?\b(\w+)\s*\(", text))


def check_headers(headers, seen, where):
    failed = False
    for header in headers:
        api = header_api(header)
        missing = sorted(api - seen)
        if not api:
            failed = True
            print("%s: FAIL: declares no SIMDPOOL_API function" % header)
        elif missing:
            failed = True
            print("%s: FAIL: %d SIMDPOOL_API function(s) not in the %s: %s"
                  % (header, len(missing), where, ", ".join(missing)))
        else:
            print("%s: ok: all %d SIMDPOOL_API functions are in the %s"
                  % (header, len(api), where))
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", default="simdpool_",
                    help="required prefix of every global symbol")
    ap.add_argument("--allow", action="append", default=[],
                    help="a global symbol name exempt from the prefix rule "
                    "(repeatable)")
    ap.add_argument("--header", action="append", default=[],
                    help="public header whose SIMDPOOL_API functions the "
                    "shared libraries must all export (repeatable)")
    ap.add_argument("--static", action="append", default=[],
                    help="static archive or relocatable object to check "
                    "(repeatable)")
    ap.add_argument("--static-header", action="append", default=[],
                    help="public header whose SIMDPOOL_API functions the "
                    "static files must all define (repeatable)")
    ap.add_argument("libs", nargs="*", help="shared libraries to check")
    args = ap.parse_intermixed_args()
    ALLOWED.update(args.allow)
    if not args.libs and not args.static:
        ap.error("nothing to check")
    failed = False
    seen_shared, seen_static = set(), set()
    jobs = [(lib, check_shared, seen_shared, "exported") for lib in args.libs]
    jobs += [(a, check_static, seen_static, "global") for a in args.static]
    for path, check, seen, kind in jobs:
        try:
            bad = check(path, args.prefix, seen)
        except (OSError, ElfError, struct.error, ValueError) as e:
            print("%s: cannot read the symbols: %s" % (path, e))
            failed = True
            continue
        if bad:
            failed = True
            shown = ", ".join(sorted(bad)[:20])
            if len(bad) > 20:
                shown += ", ... (%d more, marked above)" % (len(bad) - 20)
            print("%s: FAIL: %d %s symbol(s) without the prefix %r: %s"
                  % (path, len(bad), kind, args.prefix, shown))
        else:
            print("%s: ok: only %s* symbols are %s" % (path, args.prefix, kind))
    failed |= check_headers(args.header, seen_shared, "shared libraries")
    failed |= check_headers(args.static_header, seen_static, "static files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
