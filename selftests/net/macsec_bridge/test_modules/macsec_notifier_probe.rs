// SPDX-License-Identifier: GPL-2.0

//! Test module: a raw observer on the MACsec core's offload notifier chain
//! (`register_macsec_offload_notifier()`), with neither the kernel crate's
//! abstraction nor the module in between. It writes every announcement into
//! the trace buffer exactly as C hands it (`struct macsec_offload_info`),
//! one line each:
//!
//! ```text
//! macsec_notifier_probe: WHEN OP offload=O secy=I real=I an=N active=B new=O ret=N key=B
//! ```
//!
//! WHEN is `pre` or `post`, OP the operation's name (`add_txsa`,
//! `upd_offload`), or `op=N` for a value this module does not know, O an
//! offload mode (`off`, `phy`, `mac`, `unknown`), I an ifindex, B 0 or 1.
//! `key` says whether [`KEY`], the key the test installs, is anywhere in
//! what the probe was handed or in the objects it points to (the SecY, the
//! real device). Driven by `offload_notifier.sh`.

use kernel::{bindings, prelude::*, str::CString, types::Opaque};

module! {
    type: Probe,
    name: "macsec_notifier_probe",
    authors: ["macsec_bridge developers"],
    description: "Records the MACsec offload notifier chain's announcements",
    license: "GPL",
}

/// The registered notifier.
///
/// # Invariants
///
/// `nb` is registered on the MACsec offload chain, with [`told`] as its
/// callback, until the module is dropped; the box keeps its address.
struct Probe {
    nb: KBox<Opaque<bindings::notifier_block>>,
}

// SAFETY: the `notifier_block` is only touched by the notifier core, under
// RTNL, and by `drop`.
unsafe impl Send for Probe {}
// SAFETY: `&Probe` gives access to nothing.
unsafe impl Sync for Probe {}

impl kernel::Module for Probe {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let nb = KBox::new(
            Opaque::new(bindings::notifier_block {
                notifier_call: Some(told),
                next: core::ptr::null_mut(),
                priority: 0,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `nb` is initialised and stays at its address until it is
        // unregistered in `drop`.
        kernel::error::to_result(unsafe { bindings::register_macsec_offload_notifier(nb.get()) })?;
        // INVARIANT: registered above, with `told`.
        Ok(Probe { nb })
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: `nb` was registered in `init` (type invariant).
        // Unregistering takes RTNL, which every call of the chain holds: once
        // it returns, `told` is not running and the box may be freed.
        unsafe { bindings::unregister_macsec_offload_notifier(self.nb.get()) };
    }
}

/// The SA key `offload_notifier.sh` installs (lib.sh's `MB_KEY`,
/// `01234567890123456789012345678901`).
const KEY: [u8; 16] = [
    0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01, 0x23, 0x45, 0x67, 0x89, 0x01,
];

/// Whether the `len` bytes at `p` hold [`KEY`].
///
/// # Safety
///
/// The `len` bytes at `p` are valid for reads. Others may write them
/// meanwhile: every read is a volatile one of a byte.
unsafe fn holds_key(p: *const u8, len: usize) -> bool {
    let Some(last) = len.checked_sub(KEY.len()) else {
        return false;
    };
    (0..=last).any(|at| {
        KEY.iter().enumerate().all(|(k, b)| {
            // SAFETY: `at <= len - KEY.len()` and `k < KEY.len()`, so
            // `at + k < len`: within the caller's bytes.
            unsafe { core::ptr::read_volatile(p.add(at + k)) == *b }
        })
    })
}

/// The name of operation `op`.
fn op_name(op: bindings::macsec_offload_op) -> Option<&'static str> {
    Some(match op {
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEV_OPEN => "dev_open",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEV_STOP => "dev_stop",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_ADD_SECY => "add_secy",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_UPD_SECY => "upd_secy",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEL_SECY => "del_secy",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_ADD_RXSC => "add_rxsc",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_UPD_RXSC => "upd_rxsc",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEL_RXSC => "del_rxsc",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_ADD_RXSA => "add_rxsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_UPD_RXSA => "upd_rxsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEL_RXSA => "del_rxsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_ADD_TXSA => "add_txsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_UPD_TXSA => "upd_txsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_DEL_TXSA => "del_txsa",
        bindings::macsec_offload_op_MACSEC_OFFLOAD_OP_UPD_OFFLOAD => "upd_offload",
        _ => return None,
    })
}

/// An offload mode as `ip macsec` spells it, `unknown` for a value that is
/// none.
fn mode(v: bindings::macsec_offload) -> &'static str {
    match v {
        bindings::macsec_offload_MACSEC_OFFLOAD_OFF => "off",
        bindings::macsec_offload_MACSEC_OFFLOAD_PHY => "phy",
        bindings::macsec_offload_MACSEC_OFFLOAD_MAC => "mac",
        _ => "unknown",
    }
}

/// The chain's callback: one trace line per announcement.
///
/// # Safety
///
/// Called by the MACsec offload chain, under RTNL, with `data` a `struct
/// macsec_offload_info` valid for the call.
unsafe extern "C" fn told(
    _nb: *mut bindings::notifier_block,
    event: c_ulong,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is a valid `struct macsec_offload_info` (the caller's
    // guarantee), read by value.
    let i = unsafe { data.cast::<bindings::macsec_offload_info>().read() };
    // SAFETY: the MACsec core announces a SecY valid for the call, whose
    // netdev it holds, and the SecY's real device, which that netdev holds
    // a reference to; ifindexes change only under RTNL, held here.
    let (secy, real) = unsafe { ((*(*i.secy).netdev).ifindex, (*i.real_dev).ifindex) };
    // SAFETY: `data`, the SecY and the real device are valid for the call
    // (above), each for the size of its type.
    let key = unsafe {
        holds_key(data.cast(), size_of::<bindings::macsec_offload_info>())
            || holds_key(i.secy.cast(), size_of::<bindings::macsec_secy>())
            || holds_key(i.real_dev.cast(), size_of::<bindings::net_device>())
    };
    let when = if u32::try_from(event) == Ok(bindings::macsec_offload_event_MACSEC_OFFLOAD_PRE) {
        "pre"
    } else {
        "post"
    };
    let line = match op_name(i.op) {
        Some(op) => CString::try_from_fmt(fmt!(
            "macsec_notifier_probe: {when} {op} offload={} secy={secy} real={real} an={} \
             active={} new={} ret={} key={}",
            mode(i.offload),
            i.assoc_num,
            u8::from(i.tx_sa_active),
            mode(i.new_offload),
            i.ret,
            u8::from(key)
        )),
        None => CString::try_from_fmt(fmt!("macsec_notifier_probe: {when} op={}", i.op)),
    };
    if let Ok(line) = line {
        // SAFETY: `line` is a NUL-terminated string that outlives the call,
        // which copies it; any address will do as the caller's.
        unsafe { bindings::__trace_puts(told as usize, line.as_char_ptr()) };
    }
    bindings::NOTIFY_DONE as c_int
}
