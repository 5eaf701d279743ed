// SPDX-License-Identifier: GPL-2.0

//! The parts of the kernel crate that the core uses, over `std`, for its
//! host build (`tests/bridge.rs`, where this crate is also `kernel`).
//!
//! Same signatures, host meanings: an allocation fails only when the test
//! says so ([`alloc::fail_after`]), a mutex is `std`'s, a work item runs
//! when the test drains the queue ([`workqueue::run_pending`]).
//!
//! The host world is single-threaded: each test takes [`crate::SERIAL`]
//! first, and everything here lives in its thread.

pub mod error {
    /// An errno.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct Error(pub i32);

    pub type Result<T = (), E = Error> = core::result::Result<T, E>;

    pub mod code {
        use super::Error;
        pub const ENOENT: Error = Error(-2);
        pub const EIO: Error = Error(-5);
        pub const ENOMEM: Error = Error(-12);
        pub const EBUSY: Error = Error(-16);
        pub const ENOBUFS: Error = Error(-105);
        pub const EEXIST: Error = Error(-17);
        pub const ENODEV: Error = Error(-19);
        pub const EINVAL: Error = Error(-22);
        pub const EOPNOTSUPP: Error = Error(-95);
    }

    impl From<crate::alloc::AllocError> for Error {
        fn from(_: crate::alloc::AllocError) -> Error {
            code::ENOMEM
        }
    }
}

pub mod alloc {
    use std::cell::Cell;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct AllocError;

    #[derive(Clone, Copy)]
    pub struct Flags(pub u32);

    pub mod flags {
        use super::Flags;
        pub const GFP_KERNEL: Flags = Flags(0);
        pub const GFP_KERNEL_ACCOUNT: Flags = Flags(1);
    }

    thread_local! {
        /// Allocations left before one fails; `None`: none fails.
        static LEFT: Cell<Option<u32>> = const { Cell::new(None) };
        /// Allocations that failed.
        static FAILED: Cell<u32> = const { Cell::new(0) };
    }

    /// Makes the allocation after the next `n` fail (once), or none.
    pub fn fail_after(n: Option<u32>) {
        LEFT.with(|l| l.set(n));
    }

    /// How many allocations failed so far.
    pub fn failed() -> u32 {
        FAILED.with(Cell::get)
    }

    /// One allocation: fails where [`fail_after`] said.
    pub fn charge() -> Result<(), AllocError> {
        LEFT.with(|l| match l.get() {
            Some(0) => {
                l.set(None);
                FAILED.with(|f| f.set(f.get() + 1));
                Err(AllocError)
            }
            Some(n) => {
                l.set(Some(n - 1));
                Ok(())
            }
            None => Ok(()),
        })
    }

    pub mod kvec {
        use super::{charge, AllocError, Flags};

        pub struct PushError<T>(pub T);

        /// `KVec`: a `std` vector whose growth can fail.
        pub struct Vec<T>(std::vec::Vec<T>);

        impl<T> Default for Vec<T> {
            fn default() -> Self {
                Vec(std::vec::Vec::new())
            }
        }

        impl<T> Vec<T> {
            pub const fn new() -> Self {
                Vec(std::vec::Vec::new())
            }

            fn grow(&mut self, n: usize) -> Result<(), AllocError> {
                if self.0.capacity() - self.0.len() < n {
                    charge()?;
                    self.0.reserve(n);
                }
                Ok(())
            }

            pub fn push(&mut self, v: T, _f: Flags) -> Result<(), AllocError> {
                self.grow(1)?;
                self.0.push(v);
                Ok(())
            }

            pub fn push_within_capacity(&mut self, v: T) -> Result<(), PushError<T>> {
                if self.0.len() < self.0.capacity() {
                    self.0.push(v);
                    Ok(())
                } else {
                    Err(PushError(v))
                }
            }

            pub fn reserve(&mut self, n: usize, _f: Flags) -> Result<(), AllocError> {
                self.grow(n)
            }

            pub fn extend_from_slice(&mut self, s: &[T], _f: Flags) -> Result<(), AllocError>
            where
                T: Clone,
            {
                self.grow(s.len())?;
                self.0.extend_from_slice(s);
                Ok(())
            }

            pub fn drain_all(&mut self) -> std::vec::Drain<'_, T> {
                self.0.drain(..)
            }
        }

        impl<T> core::ops::Deref for Vec<T> {
            type Target = std::vec::Vec<T>;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        impl<T> core::ops::DerefMut for Vec<T> {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.0
            }
        }

        impl<T> IntoIterator for Vec<T> {
            type Item = T;
            type IntoIter = std::vec::IntoIter<T>;
            fn into_iter(self) -> Self::IntoIter {
                self.0.into_iter()
            }
        }
    }

    pub type KVec<T> = kvec::Vec<T>;
    pub type KVVec<T> = kvec::Vec<T>;
    /// `KBox`: a `std` box whose allocation can fail.
    pub struct KBox<T>(Box<T>);

    impl<T> KBox<T> {
        pub fn new(v: T, _f: Flags) -> Result<Self, AllocError> {
            charge()?;
            Ok(KBox(Box::new(v)))
        }

        /// `KBox::pin_init`: on the host, a value is built, then boxed.
        pub fn pin_init(
            init: crate::error::Result<T>,
            _f: Flags,
        ) -> crate::error::Result<core::pin::Pin<KBox<T>>> {
            charge()?;
            let b = KBox(Box::new(init?));
            // SAFETY: the value lives in its own allocation, which moves
            // only with the box.
            Ok(unsafe { core::pin::Pin::new_unchecked(b) })
        }
    }

    impl<T> core::ops::Deref for KBox<T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.0
        }
    }

    impl<T> core::ops::DerefMut for KBox<T> {
        fn deref_mut(&mut self) -> &mut T {
            &mut self.0
        }
    }
}

pub mod rbtree {
    use crate::alloc::{charge, AllocError, Flags};
    use std::collections::BTreeMap;

    /// `RBTree`, over a B-tree: the same order, the same lookups.
    pub struct RBTree<K, V>(BTreeMap<K, V>);

    impl<K: Ord, V> Default for RBTree<K, V> {
        fn default() -> Self {
            RBTree(BTreeMap::new())
        }
    }

    pub struct RBTreeNodeReservation;
    pub struct RBTreeNode<K, V>(K, V);

    impl RBTreeNodeReservation {
        pub fn new(_f: Flags) -> Result<Self, AllocError> {
            charge()?;
            Ok(RBTreeNodeReservation)
        }

        pub fn into_node<K, V>(self, k: K, v: V) -> RBTreeNode<K, V> {
            RBTreeNode(k, v)
        }
    }

    impl<K, V> RBTreeNode<K, V> {
        pub fn to_key_value(self) -> (K, V) {
            (self.0, self.1)
        }

        pub fn into_reservation(self) -> RBTreeNodeReservation {
            RBTreeNodeReservation
        }
    }

    pub struct Cursor<'a, K, V>(&'a K, &'a V);

    impl<'a, K, V> Cursor<'a, K, V> {
        pub fn current(&self) -> (&'a K, &'a V) {
            (self.0, self.1)
        }
    }

    pub struct CursorMut<'a, K: Ord, V>(&'a mut RBTree<K, V>, K);

    impl<'a, K: Ord + Clone, V> CursorMut<'a, K, V> {
        pub fn remove_current(self) -> (Option<CursorMut<'a, K, V>>, RBTreeNode<K, V>) {
            let CursorMut(t, k) = self;
            let v = t.0.remove(&k).expect("the cursor's key is in the tree");
            let next = t.0.range(k.clone()..).next().map(|(k, _)| k.clone());
            (next.map(|n| CursorMut(t, n)), RBTreeNode(k, v))
        }

        pub fn current(&self) -> (&K, &V) {
            let CursorMut(t, k) = self;
            t.0.get_key_value(k)
                .expect("the cursor's key is in the tree")
        }

        pub fn move_next(self) -> Option<CursorMut<'a, K, V>> {
            let CursorMut(t, k) = self;
            let next = t.0.range(k..).nth(1).map(|(k, _)| k.clone());
            next.map(|n| CursorMut(t, n))
        }
    }

    impl<K: Ord + Clone, V> RBTree<K, V> {
        pub fn new() -> Self {
            RBTree(BTreeMap::new())
        }

        pub fn get(&self, k: &K) -> Option<&V> {
            self.0.get(k)
        }

        pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
            self.0.get_mut(k)
        }

        pub fn insert(&mut self, n: RBTreeNode<K, V>) -> Option<RBTreeNode<K, V>> {
            let RBTreeNode(k, v) = n;
            self.0.insert(k.clone(), v).map(|old| RBTreeNode(k, old))
        }

        pub fn remove(&mut self, k: &K) -> Option<V> {
            self.0.remove(k)
        }

        pub fn remove_node(&mut self, k: &K) -> Option<RBTreeNode<K, V>> {
            let (k, v) = self.0.remove_entry(k)?;
            Some(RBTreeNode(k, v))
        }

        pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
            self.0.iter()
        }

        pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
            self.0.iter_mut()
        }

        pub fn values(&self) -> impl Iterator<Item = &V> {
            self.0.values()
        }

        pub fn cursor_lower_bound(&self, k: &K) -> Option<Cursor<'_, K, V>> {
            self.0.range(k.clone()..).next().map(|(k, v)| Cursor(k, v))
        }

        pub fn cursor_lower_bound_mut(&mut self, k: &K) -> Option<CursorMut<'_, K, V>> {
            let k = self.0.range(k.clone()..).next()?.0.clone();
            Some(CursorMut(self, k))
        }

        pub fn cursor_front_mut(&mut self) -> Option<CursorMut<'_, K, V>> {
            let k = self.0.keys().next()?.clone();
            Some(CursorMut(self, k))
        }
    }
}

pub mod sync {
    use crate::alloc::Flags;
    use crate::error::Result;

    /// RCU: the host world is single-threaded, and nothing is freed under
    /// a reader.
    pub mod rcu {
        pub struct Guard;

        pub fn read_lock() -> Guard {
            Guard
        }
    }

    pub use std::sync::Arc;

    /// `Arc::pin_init`: on the host, a value is built, then shared.
    pub trait ArcInit<T> {
        fn pin_init(init: Result<T>, f: Flags) -> Result<Arc<T>>;
    }

    impl<T> ArcInit<T> for Arc<T> {
        fn pin_init(init: Result<T>, _f: Flags) -> Result<Arc<T>> {
            crate::alloc::charge()?;
            Ok(Arc::new(init?))
        }
    }

    pub struct Mutex<T>(std::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub fn new(v: T) -> Self {
            Mutex(std::sync::Mutex::new(v))
        }

        pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
            // A poisoned lock is a failed test already.
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }

        /// Whether someone holds it: the world checks that no device is
        /// touched with the state locked.
        pub fn is_locked(&self) -> bool {
            self.0.try_lock().is_err()
        }
    }

    pub mod aref {
        use core::ptr::NonNull;

        /// # Safety
        ///
        /// `inc_ref` keeps the object alive until the matching `dec_ref`.
        pub unsafe trait AlwaysRefCounted {
            fn inc_ref(&self);
            /// # Safety
            ///
            /// `obj` holds a reference from `inc_ref`.
            unsafe fn dec_ref(obj: NonNull<Self>);
        }

        /// A counted reference.
        pub struct ARef<T: AlwaysRefCounted>(NonNull<T>);

        // SAFETY: as the kernel's: the object is shared and its count is its own.
        unsafe impl<T: AlwaysRefCounted + Sync + Send> Send for ARef<T> {}
        // SAFETY: as above.
        unsafe impl<T: AlwaysRefCounted + Sync + Send> Sync for ARef<T> {}

        impl<T: AlwaysRefCounted> From<&T> for ARef<T> {
            fn from(t: &T) -> Self {
                t.inc_ref();
                ARef(NonNull::from(t))
            }
        }

        impl<T: AlwaysRefCounted> Clone for ARef<T> {
            fn clone(&self) -> Self {
                ARef::from(&**self)
            }
        }

        impl<T: AlwaysRefCounted> core::ops::Deref for ARef<T> {
            type Target = T;
            fn deref(&self) -> &T {
                // SAFETY: the count keeps it alive (type invariant).
                unsafe { self.0.as_ref() }
            }
        }

        impl<T: AlwaysRefCounted> Drop for ARef<T> {
            fn drop(&mut self) {
                // SAFETY: this holds a reference.
                unsafe { T::dec_ref(self.0) }
            }
        }
    }
}

pub mod ffi {
    pub use core::ffi::c_int;
}

pub mod time {
    pub fn msecs_to_jiffies(ms: u32) -> u64 {
        ms.into()
    }

    /// # Safety
    ///
    /// As the kernel's: `ktime_get()` is never negative.
    pub unsafe trait ClockSource {
        fn ktime_get() -> i64;
    }

    pub struct Monotonic;

    // SAFETY: the host's clock counts up from 0.
    unsafe impl ClockSource for Monotonic {
        fn ktime_get() -> i64 {
            // SAFETY: none needed on the host.
            unsafe { crate::bindings::ktime_get() }
        }
    }
}

pub mod workqueue {
    use crate::sync::Arc;
    use std::cell::RefCell;
    use std::marker::PhantomData;

    pub trait WorkItem {
        type Pointer;
        fn run(this: Self::Pointer);
    }

    #[derive(Default)]
    pub struct Work<T>(PhantomData<T>);
    #[derive(Default)]
    pub struct DelayedWork<T>(pub Work<T>);

    pub use crate::{impl_has_delayed_work, impl_has_work, new_delayed_work, new_work};

    impl<T> Work<T> {
        pub fn new() -> Self {
            Work(PhantomData)
        }

        /// Nothing to wait for: the host's items run when a test drains
        /// them ([`run_pending`]).
        pub fn flush(&self) -> bool {
            false
        }
    }

    impl<T> DelayedWork<T> {
        pub fn new() -> Self {
            DelayedWork(Work::new())
        }

        /// As [`Work::flush`].
        pub fn flush(&self) -> bool {
            false
        }
    }

    type Item = (usize, Box<dyn FnOnce()>);

    thread_local! {
        static QUEUE: RefCell<Vec<Item>> = const { RefCell::new(Vec::new()) };
    }

    pub struct Queue;

    pub fn system() -> &'static Queue {
        &Queue
    }

    impl Queue {
        /// Queues `w` unless it is queued: then gives it back.
        pub fn enqueue<T: WorkItem<Pointer = Arc<T>> + 'static>(
            &self,
            w: Arc<T>,
        ) -> Result<(), Arc<T>> {
            let id = Arc::as_ptr(&w) as usize;
            QUEUE.with(|q| {
                let mut q = q.borrow_mut();
                if q.iter().any(|(i, _)| *i == id) {
                    return Err(w);
                }
                q.push((id, Box::new(move || T::run(w))));
                Ok(())
            })
        }

        pub fn enqueue_delayed<T: WorkItem<Pointer = Arc<T>> + 'static>(
            &self,
            w: Arc<T>,
            _delay: u64,
        ) -> Result<(), Arc<T>> {
            self.enqueue(w)
        }
    }

    /// Runs what is queued now (not what those runs queue); returns how
    /// many ran.
    pub fn run_pending() -> usize {
        let items = QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()));
        let n = items.len();
        for (_, f) in items {
            f();
        }
        n
    }

    /// Forgets what is queued (after a failed test case).
    pub fn discard() {
        let items = QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()));
        drop(items);
    }

    /// What is queued, by work item.
    pub fn queued() -> usize {
        QUEUE.with(|q| q.borrow().len())
    }
}

pub mod prelude {
    pub use crate::alloc::flags::{GFP_KERNEL, GFP_KERNEL_ACCOUNT};
    pub use crate::alloc::{KBox, KVec};
    pub use crate::error::code::*;
    pub use crate::error::{Error, Result};
    pub use crate::sync::ArcInit;
    pub use crate::{pin_init, pr_err, pr_warn};
    pub use core::pin::Pin;
    pub use macsec_bridge_host_macros::{pin_data, vtable};
}

#[macro_export]
macro_rules! pr_warn {
    ($($arg:tt)*) => {
        $crate::host::log_warning(format!($($arg)*))
    };
}

#[macro_export]
macro_rules! pr_err {
    ($($arg:tt)*) => {
        $crate::host::log_warning(format!($($arg)*))
    };
}

/// `pin_init!(T { a <- x, b: y, c })`: on the host, `Ok(T { a: x, b: y, c })`.
#[macro_export]
macro_rules! pin_init {
    ($t:ident { $($body:tt)* }) => { $crate::__pin_init_fields!(@ $t [] $($body)*) };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __pin_init_fields {
    (@ $t:ident [$($done:tt)*]) => {
        ::core::result::Result::<$t, $crate::error::Error>::Ok($t { $($done)* })
    };
    (@ $t:ident [$($done:tt)*] $f:ident <- $e:expr $(, $($rest:tt)*)?) => {
        $crate::__pin_init_fields!(@ $t [$($done)* $f: $e,] $($($rest)*)?)
    };
    (@ $t:ident [$($done:tt)*] $f:ident : $e:expr $(, $($rest:tt)*)?) => {
        $crate::__pin_init_fields!(@ $t [$($done)* $f: $e,] $($($rest)*)?)
    };
    (@ $t:ident [$($done:tt)*] $f:ident $(, $($rest:tt)*)?) => {
        $crate::__pin_init_fields!(@ $t [$($done)* $f,] $($($rest)*)?)
    };
}

#[macro_export]
macro_rules! new_mutex {
    ($v:expr $(, $name:literal)?) => {
        $crate::sync::Mutex::new($v)
    };
}

#[macro_export]
macro_rules! new_work {
    ($($name:literal)?) => {
        $crate::workqueue::Work::new()
    };
}

#[macro_export]
macro_rules! new_delayed_work {
    ($($name:literal)?) => {
        $crate::workqueue::DelayedWork::new()
    };
}

#[macro_export]
macro_rules! impl_has_work {
    ($($t:tt)*) => {};
}

#[macro_export]
macro_rules! impl_has_delayed_work {
    ($($t:tt)*) => {};
}

pub mod str {
    /// The kernel's `CStr`: a C string that formats as text.
    #[repr(transparent)]
    pub struct CStr(std::ffi::CStr);

    impl CStr {
        pub fn new(s: &std::ffi::CStr) -> &CStr {
            // SAFETY: `CStr` is a transparent `std::ffi::CStr`.
            unsafe { &*(s as *const std::ffi::CStr as *const CStr) }
        }
    }

    impl core::ops::Deref for CStr {
        type Target = std::ffi::CStr;
        fn deref(&self) -> &std::ffi::CStr {
            &self.0
        }
    }

    impl core::fmt::Display for CStr {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str(&self.0.to_string_lossy())
        }
    }

    impl core::fmt::Debug for CStr {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            core::fmt::Debug::fmt(&self.0, f)
        }
    }
}
