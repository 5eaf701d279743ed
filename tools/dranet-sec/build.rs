// SPDX-License-Identifier: GPL-2.0
//! Compiles the tcx program of `dranet-sec audit` (`bpf/audit.bpf.c`) into
//! `$OUT_DIR/audit.bpf.o` with clang: `$BPF_CLANG`, else the repo's
//! toolchain's `clang-19`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "bpf/audit.bpf.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang-19".to_string());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = out.join("audit.bpf.o");
    let status = Command::new(&clang)
        .args([
            "-target", "bpf", "-O2", "-Wall", "-Wextra", "-Werror", "-c", src, "-o",
        ])
        .arg(&obj)
        .status()
        .unwrap_or_else(|e| panic!("running {clang} for {src}: {e} (set BPF_CLANG)"));
    assert!(status.success(), "{clang} failed on {src}");
}
