//! Gives the shared library the soname of linux-gpib's user library, so that programs
//! linked against it (or loading it by that name) ask for `libgpib.so.0`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libgpib.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}
