// SPDX-License-Identifier: GPL-2.0

//! Which path the host build of the core takes: as for a kernel with the
//! MACsec core's offload notifier, or, with `MB_HOST_PATH=interposer`, as
//! for one without it (the module's `MACSEC_BRIDGE_COMPAT` build).

fn main() {
    println!("cargo:rustc-check-cfg=cfg(MACSEC_BRIDGE_COMPAT)");
    println!("cargo:rerun-if-env-changed=MB_HOST_PATH");
    match std::env::var("MB_HOST_PATH").as_deref() {
        Ok("interposer") => println!("cargo:rustc-cfg=MACSEC_BRIDGE_COMPAT"),
        Ok("notifier") | Err(_) => {}
        Ok(other) => panic!("MB_HOST_PATH={other}: interposer or notifier"),
    }
}
