//! The `linux-gpib` feature's link directive, when the environment asks for one.
//!
//! linux-gpib-sys built with `NO_LOCAL_LIB=1` (its shipped bindings, no installed
//! linux-gpib) names no library, so whoever builds must. The README's way is RUSTFLAGS
//! (`-L native=DIR -l dylib=gpib`), which works but is part of every crate's
//! fingerprint: every dependency is rebuilt, and none of those builds can be shared
//! with the default build's (compat/ci.sh and vboard/ci.sh share them through cargo's
//! build-dir). `GPIB_LIBGPIB_DIR=DIR` does the same from here, for this crate and
//! whatever links it, and changes nothing else: with the feature on and the variable
//! set, libgpib is linked from DIR; otherwise this script prints nothing but its
//! rerun condition.
fn main() {
    println!("cargo:rerun-if-env-changed=GPIB_LIBGPIB_DIR");
    if std::env::var_os("CARGO_FEATURE_LINUX_GPIB").is_none() {
        return;
    }
    if let Some(dir) = std::env::var_os("GPIB_LIBGPIB_DIR").filter(|d| !d.is_empty()) {
        let dir = dir.to_str().expect("GPIB_LIBGPIB_DIR is not UTF-8");
        println!("cargo:rustc-link-search=native={dir}");
        println!("cargo:rustc-link-lib=dylib=gpib");
    }
}
