#!/usr/bin/env python3
"""The libgpib functions the linux-gpib backend declares (gpib/src/backend/linux_gpib/ffi.rs)
against linux-gpib's C header (compat/include/gpib/ib.h): every declared function exists
there with the same argument and return types, so a mismatch fails CI instead of
corrupting a call at run time.

Usage: .ci/ffi_matches_header.py [ffi.rs] [ib.h]
"""
import re
import sys

RS = sys.argv[1] if len(sys.argv) > 1 else "gpib/src/backend/linux_gpib/ffi.rs"
H = sys.argv[2] if len(sys.argv) > 2 else "compat/include/gpib/ib.h"

# C type -> the Rust type that has its size and meaning.
C_TO_RUST = {
    "int": "c_int",
    "long": "c_long",
    "short*": "*mut c_short",
    "int*": "*mut c_int",
    "char*": "*mut c_char",
    "const char*": "*const c_char",
    "void*": "*mut c_void",
    "const void*": "*const c_void",
    "Addr4882_t": "u16",
    "void": "()",
}


def c_type(decl: str) -> str:
    """The type of one C parameter declaration (its name dropped), spaces normalised."""
    decl = " ".join(decl.replace("*", " * ").split())
    words = decl.split(" ")
    if words[-1] != "*" and len(words) > 1 and words[-1] not in ("int", "long", "void", "char", "short"):
        words = words[:-1]  # the parameter's name
    return " ".join(words).replace(" *", "*")


def header_functions(text: str) -> dict:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = {}
    for m in re.finditer(r"^extern\s+([\w\s\*]+?)\s*\b(\w+)\s*\(([^)]*)\)\s*;", text, re.M):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        args = [] if params in ("", "void") else [c_type(p) for p in params.split(",")]
        out[name] = (c_type(ret + " x") if ret != "void" else "void", args)
    return out


def rust_functions(text: str) -> dict:
    block = re.search(r'extern "C" \{(.*?)\n\}', text, re.S)
    if not block:
        sys.exit(f"{RS}: no extern \"C\" block")
    out = {}
    for m in re.finditer(r"fn\s+(\w+)\s*\(([^)]*)\)\s*(?:->\s*([^;]+))?;", block.group(1), re.S):
        name, params, ret = m.group(1), m.group(2), (m.group(3) or "()").strip()
        args = [" ".join(p.split(":", 1)[1].split()) for p in params.split(",") if p.strip()]
        out[name] = (ret, args)
    return out


def main() -> int:
    c = header_functions(open(H).read())
    rs = rust_functions(open(RS).read())
    bad = []
    for name, (ret, args) in sorted(rs.items()):
        if name not in c:
            bad.append(f"{name}: not declared in {H}")
            continue
        cret, cargs = c[name]
        want_ret = C_TO_RUST.get(cret)
        want_args = [C_TO_RUST.get(a, f"?{a}") for a in cargs]
        if want_ret != ret or want_args != args:
            bad.append(f"{name}: {RS} has ({', '.join(args)}) -> {ret}, {H} has "
                       f"({', '.join(cargs)}) -> {cret}, i.e. ({', '.join(want_args)}) -> {want_ret}")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{len(rs)} libgpib functions declared in {RS}; {len(rs) - len(bad)} match {H}")
    return 1 if bad or not rs else 0


if __name__ == "__main__":
    sys.exit(main())
