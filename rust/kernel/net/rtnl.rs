// SPDX-License-Identifier: GPL-2.0

//! The routing netlink mutex (RTNL).
//!
//! C header: [`include/linux/rtnetlink.h`](srctree/include/linux/rtnetlink.h)
//!
//! Most of the networking configuration state (device flags and features,
//! upper/lower links, netdevice notifiers) is protected by RTNL. APIs that
//! need it take a [`&Rtnl`](Rtnl): a proof, checked by the compiler, that the
//! caller holds the lock. A proof is obtained by locking ([`Rtnl::lock`]) or,
//! inside callbacks that the networking core invokes with RTNL held, with
//! [`Rtnl::assume_held`].
//!
//! # Examples
//!
//! ```
//! use kernel::net::rtnl::Rtnl;
//!
//! fn needs_rtnl(_rtnl: &Rtnl) -> bool {
//!     // SAFETY: `rtnl_is_locked` only reads the mutex.
//!     unsafe { kernel::bindings::rtnl_is_locked() != 0 }
//! }
//!
//! let guard = Rtnl::lock();
//! assert!(needs_rtnl(&guard));
//! drop(guard);
//! // SAFETY: `rtnl_is_locked` only reads the mutex.
//! assert_eq!(unsafe { kernel::bindings::rtnl_is_locked() }, 0);
//! ```

use crate::bindings;
use core::marker::PhantomData;

/// Proof that the current thread holds RTNL.
///
/// Values of this type only ever exist behind a reference whose lifetime is
/// bounded by the critical section: see [`RtnlGuard`] and
/// [`Rtnl::assume_held`].
///
/// # Invariants
///
/// While a `&Rtnl` is live, the current thread holds RTNL.
pub struct Rtnl {
    _not_send: PhantomData<*mut ()>,
}

/// The one value all proofs point to.
static TOKEN: Rtnl = Rtnl {
    _not_send: PhantomData,
};

// SAFETY: `Rtnl` is a zero-sized token with no interior state; sharing the
// static between threads shares nothing. A reference to it is only handed out
// to a thread that holds RTNL (type invariant), and the raw-pointer marker keeps
// guards from moving to other threads.
unsafe impl Sync for Rtnl {}

impl Rtnl {
    /// Takes RTNL, sleeping until it is available.
    pub fn lock() -> RtnlGuard {
        // SAFETY: `rtnl_lock` may be called from any sleepable context.
        unsafe { bindings::rtnl_lock() };
        // INVARIANT: the lock was just taken and is released on drop.
        RtnlGuard {
            _not_send: PhantomData,
        }
    }

    /// Returns a proof that RTNL is held, without taking it.
    ///
    /// # Safety
    ///
    /// The caller must hold RTNL for the whole lifetime `'a`, e.g. because it
    /// runs in a callback that the networking core documents as invoked under
    /// RTNL (netdevice notifiers, `macsec_ops`, `ndo_*` config operations).
    pub unsafe fn assume_held<'a>() -> &'a Rtnl {
        // SAFETY: `rtnl_is_locked` only reads the mutex state.
        debug_assert!(unsafe { bindings::rtnl_is_locked() } != 0);
        // INVARIANT: the caller guarantees RTNL is held for `'a`.
        &TOKEN
    }
}

/// RTNL, held until this guard is dropped.
///
/// # Invariants
///
/// The current thread holds RTNL, taken by [`Rtnl::lock`].
#[must_use = "RTNL is released as soon as the guard is dropped"]
pub struct RtnlGuard {
    _not_send: PhantomData<*mut ()>,
}

impl core::ops::Deref for RtnlGuard {
    type Target = Rtnl;

    fn deref(&self) -> &Rtnl {
        // INVARIANT: the returned reference cannot outlive the guard, which
        // holds RTNL.
        &TOKEN
    }
}

impl Drop for RtnlGuard {
    fn drop(&mut self) {
        // SAFETY: by the type invariant this thread holds RTNL.
        unsafe { bindings::rtnl_unlock() };
    }
}
