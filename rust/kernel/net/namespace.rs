// SPDX-License-Identifier: GPL-2.0

//! Network namespaces.
//!
//! C header: [`include/net/net_namespace.h`](srctree/include/net/net_namespace.h)
//!
//! # Examples
//!
//! ```
//! use kernel::net::namespace::{Net, NETNSA_NSID_NOT_ASSIGNED};
//! use kernel::types::ARef;
//!
//! let init = Net::init_net();
//! let held: ARef<Net> = init.into();
//! assert!(*held == *init);
//! // A namespace has no id for itself, and id 12345 names nothing.
//! assert_eq!(init.peer_id(&held), NETNSA_NSID_NOT_ASSIGNED);
//! assert!(init.get_by_id(12345).is_none());
//! // The cookie names the namespace, not the reference.
//! assert_eq!(held.cookie(), init.cookie());
//! // Doctests run in a kernel thread, with every capability.
//! assert!(init.net_admin_capable());
//! ```

use crate::{
    bindings,
    error::{from_err_ptr, Result},
    types::{ARef, AlwaysRefCounted, Opaque},
};
use core::ptr::NonNull;

/// "No id" in `peernet2id` answers (uapi `NETNSA_NSID_NOT_ASSIGNED`).
pub const NETNSA_NSID_NOT_ASSIGNED: i32 = -1;

/// A network namespace (`struct net`).
///
/// # Invariants
///
/// The inner `struct net` is valid for as long as a reference to this type
/// exists: every `&Net` is backed either by a reference count (an
/// [`ARef<Net>`]) or by a C object that pins the namespace (a device in it,
/// `init_net`).
#[repr(transparent)]
pub struct Net(Opaque<bindings::net>);

// SAFETY: `struct net` is designed to be used from any thread; its reference
// count is atomic.
unsafe impl Send for Net {}
// SAFETY: all the methods of `Net` that take `&self` are safe to call
// concurrently.
unsafe impl Sync for Net {}

// SAFETY: `get_net`/`put_net` keep the namespace alive until the count drops
// to zero, and every `struct net` is reference counted.
unsafe impl AlwaysRefCounted for Net {
    fn inc_ref(&self) {
        // SAFETY: by the type invariant the namespace is valid.
        unsafe { bindings::get_net(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns an increment taken by `inc_ref`.
        unsafe { bindings::put_net(obj.cast().as_ptr()) };
    }
}

impl Net {
    /// Returns the initial network namespace.
    pub fn init_net() -> &'static Net {
        // SAFETY: `init_net` is a static that lives for the whole kernel
        // lifetime, and `Net` is transparent over `struct net`.
        unsafe { Self::from_raw(&raw mut bindings::init_net) }
    }

    /// Creates a reference to a `Net` from a pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `struct net` that stays alive for `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::net) -> &'a Net {
        // SAFETY: `Net` is `repr(transparent)` over the C struct, and the
        // caller guarantees validity for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns the raw `struct net` pointer.
    pub fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }

    /// The namespace's cookie (`net->net_cookie`): unique to it for the
    /// whole uptime, unlike its address, which a later namespace may reuse.
    pub fn cookie(&self) -> u64 {
        // SAFETY: the namespace is valid, and `net_cookie` is written once,
        // before the namespace is published.
        unsafe { (*self.as_raw()).net_cookie }
    }

    /// Looks up a namespace by a file descriptor (`/proc/PID/ns/net`,
    /// `/run/netns/NAME`), as `IFLA_NET_NS_FD` does.
    ///
    /// Fails with `EINVAL` when `fd` is not a network namespace and `EBADF`
    /// when it is not open.
    pub fn get_by_fd(fd: i32) -> Result<ARef<Net>> {
        // SAFETY: `get_net_ns_by_fd` accepts any fd value and returns either
        // a counted reference or an error pointer.
        let ptr = from_err_ptr(unsafe { bindings::get_net_ns_by_fd(fd) })?;
        // SAFETY: on success the pointer is non-null and we own the
        // reference `get_net_ns_by_fd` took.
        Ok(unsafe { ARef::from_raw(NonNull::new_unchecked(ptr.cast())) })
    }

    /// Looks up the namespace that `self` knows as `id` (a peer netns id,
    /// as in `IFLA_LINK_NETNSID`).
    pub fn get_by_id(&self, id: i32) -> Option<ARef<Net>> {
        // SAFETY: `self` is valid; the call returns a counted reference or
        // NULL.
        let ptr = unsafe { bindings::get_net_ns_by_id(self.as_raw(), id) };
        // SAFETY: a non-null result carries a reference we now own.
        NonNull::new(ptr).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// Returns the id `self` uses for `peer`, or a negative value when it has
    /// none (the caller then omits the attribute, as rtnetlink does).
    ///
    /// Allocates an id when there is none yet, like `peernet2id_alloc`, so
    /// that user space in `self` can name `peer` from now on.
    pub fn peer_id(&self, peer: &Net) -> i32 {
        if self == peer {
            return NETNSA_NSID_NOT_ASSIGNED;
        }
        // SAFETY: both namespaces are valid; the function takes its own
        // locks.
        unsafe { bindings::peernet2id_alloc(self.as_raw(), peer.as_raw(), bindings::GFP_KERNEL) }
    }

    /// Whether the current task has `cap` over the user namespace that owns
    /// this network namespace (`ns_capable(net->user_ns, cap)`).
    pub fn capable(&self, cap: u32) -> bool {
        // SAFETY: the namespace is valid, so is its `user_ns`; `ns_capable`
        // is callable from process context.
        unsafe { bindings::ns_capable((*self.as_raw()).user_ns, cap as i32) }
    }

    /// Whether the current task may administer networking in this namespace
    /// (`CAP_NET_ADMIN` over its owning user namespace).
    pub fn net_admin_capable(&self) -> bool {
        self.capable(bindings::CAP_NET_ADMIN)
    }
}

impl PartialEq for Net {
    fn eq(&self, other: &Net) -> bool {
        core::ptr::eq(self.as_raw(), other.as_raw())
    }
}

impl Eq for Net {}
