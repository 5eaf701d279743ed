// SPDX-License-Identifier: GPL-2.0

//! The state's indexes: hash tables whose lookups, insertions and removals
//! cost O(1) expected, whatever the number of entries.
//!
//! The state is consulted on every netdev event of the system, under RTNL,
//! and most of those events are about devices it does not track. A
//! red-black tree answers in O(log N), touching a node in another cache
//! line at each level; at a thousand ports that is ten lines per lookup,
//! and an event makes a dozen lookups. A table answers in about one.
//!
//! Open addressing with linear probing, at most half full, so a probe
//! meets a free slot within a few steps; removal shifts the entries after
//! it back (no tombstones), so a table never degrades with churn. A key is
//! hashed by its first word only ([`Key::word`]): the entries of a
//! two-part key `(a, b)` lie on one run of slots from `a`'s home, and
//! [`Index::seconds`] finds them all without knowing the `b`s.
//!
//! Growth is the only allocation: [`Index::reserve`] makes room before an
//! update changes anything, so that what it then inserts cannot fail.
//! The table shrinks again when it is an eighth full, if memory allows.
//!
//! Each table counts the slots its operations examine ([`Index::probes`]):
//! its work in a unit that no machine's speed changes, which the
//! `macsec_bridge_update` trace event reports per update.
//!
//! Layer 1 (types and leaves). Owns: the table ([`Index`]). May use:
//! nothing of the driver.

use core::cell::Cell;
use kernel::alloc::{Flags, KVVec};

/// What an [`Index`] is keyed by.
pub(crate) trait Key: Copy + Eq {
    /// The word the key is hashed by.
    fn word(&self) -> u64;
}

impl Key for usize {
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl Key for u64 {
    fn word(&self) -> u64 {
        *self
    }
}

/// A two-part key, hashed by its first part: see [`Index::seconds`].
impl<B: Copy + Eq> Key for (usize, B) {
    fn word(&self) -> u64 {
        self.0 as u64
    }
}

/// `GOLDEN_RATIO_64` of `<linux/hash.h>`: Fibonacci hashing spreads
/// consecutive keys (serials) and aligned ones (addresses) alike.
const GOLDEN_RATIO_64: u64 = 0x61c8_8646_80b5_83eb;

/// The fewest slots of a table that has any.
const MIN_SLOTS: usize = 8;

/// A hash table from `K` to `V`.
///
/// # Invariants
///
/// - `slots` is empty, or its length is a power of two of at least
///   [`MIN_SLOTS`] and more than twice `len`: a probe always ends.
/// - `len` is the number of occupied slots, and no two hold one key.
/// - Every entry is reachable from its home slot ([`Index::home`]) by
///   stepping forward, wrapping, over occupied slots only.
pub(crate) struct Index<K: Key, V> {
    slots: KVVec<Option<(K, V)>>,
    len: usize,
    /// How the slots are allocated.
    flags: Flags,
    /// Slots examined so far, by every operation (wrapping).
    probes: Cell<u64>,
}

impl<K: Key, V> Index<K, V> {
    /// An empty table, which allocates with `flags` when it grows.
    pub(crate) fn new(flags: Flags) -> Self {
        Index {
            slots: KVVec::new(),
            len: 0,
            flags,
            probes: Cell::new(0),
        }
    }

    /// How many slots the table's operations have examined so far
    /// (wrapping): lookups, insertions, removals with their back-shifts,
    /// iterations and rehashes alike.
    pub(crate) fn probes(&self) -> u64 {
        self.probes.get()
    }

    /// `n` more slots were examined.
    fn probed(&self, n: usize) {
        add_probes(&self.probes, n);
    }

    /// How many entries there are.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Where the probe for keys of first word `w` starts. The slots are
    /// not empty.
    fn home(&self, w: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (w.wrapping_mul(GOLDEN_RATIO_64) >> (64 - bits)) as usize
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot that holds `k`.
    fn find(&self, k: &K) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mut i = self.home(k.word());
        loop {
            self.probed(1);
            match &self.slots[i] {
                None => return None,
                Some((kk, _)) if kk == k => return Some(i),
                Some(_) => i = (i + 1) & self.mask(),
            }
        }
    }

    /// The value of `k`.
    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        let i = self.find(k)?;
        self.slots[i].as_ref().map(|(_, v)| v)
    }

    /// The value of `k`, to change.
    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        let i = self.find(k)?;
        self.slots[i].as_mut().map(|(_, v)| v)
    }

    /// Makes room for `n` more entries: inserting them then allocates
    /// nothing.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), kernel::alloc::AllocError> {
        let need = self.len.saturating_add(n);
        if need < self.slots.len() / 2 {
            return Ok(());
        }
        let slots = need
            .checked_mul(2)
            .and_then(|s| s.checked_add(1))
            .and_then(usize::checked_next_power_of_two)
            .ok_or(kernel::alloc::AllocError)?;
        self.rehash(slots.max(MIN_SLOTS))
    }

    /// Moves every entry to a table of `slots` slots (a power of two, more
    /// than twice `len`).
    fn rehash(&mut self, slots: usize) -> Result<(), kernel::alloc::AllocError> {
        let mut new = KVVec::new();
        new.reserve(slots, self.flags)?;
        for _ in 0..slots {
            // Cannot fail: the capacity is there.
            let _ = new.push_within_capacity(None);
        }
        let old = core::mem::replace(&mut self.slots, new);
        self.probed(old.len());
        for (k, v) in old.into_iter().flatten() {
            self.place(k, v);
        }
        Ok(())
    }

    /// Puts `(k, v)` in the first free slot from its home. `k` is not in
    /// the table, and there is a free slot.
    fn place(&mut self, k: K, v: V) {
        let mut i = self.home(k.word());
        self.probed(1);
        while self.slots[i].is_some() {
            i = (i + 1) & self.mask();
            self.probed(1);
        }
        self.slots[i] = Some((k, v));
    }

    /// Sets the value of `k` to `v`, and returns the one it replaced.
    /// Gives `(k, v)` back if there was no room and none could be made.
    pub(crate) fn insert(&mut self, k: K, v: V) -> Result<Option<V>, (K, V)> {
        if let Some(i) = self.find(&k) {
            return Ok(self.slots[i].replace((k, v)).map(|(_, old)| old));
        }
        if self.reserve(1).is_err() {
            return Err((k, v));
        }
        self.place(k, v);
        self.len += 1;
        Ok(None)
    }

    /// Takes `k` out and returns its value.
    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        let mut hole = self.find(k)?;
        let (_, v) = self.slots[hole].take()?;
        self.len -= 1;
        // Each entry after the hole, up to the next free slot, moves back
        // into it if its probe passes the hole: what remains reachable
        // from its home.
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            self.probed(1);
            let Some((kk, _)) = &self.slots[j] else {
                break;
            };
            let from_home = j.wrapping_sub(self.home(kk.word())) & mask;
            let from_hole = j.wrapping_sub(hole) & mask;
            if from_home >= from_hole {
                self.slots[hole] = self.slots[j].take();
                hole = j;
            }
        }
        if self.len * 8 < self.slots.len() && self.slots.len() > MIN_SLOTS {
            // Smaller if memory allows; the larger table works as well.
            let _ = self.rehash(self.slots.len() / 2);
        }
        Some(v)
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.slots
            .iter()
            .inspect(|_| self.probed(1))
            .filter_map(|s| s.as_ref().map(|(k, v)| (k, v)))
    }

    /// Every entry, in no particular order, values to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        // The slots are borrowed for changing: count through the field.
        let probes = &self.probes;
        self.slots
            .iter_mut()
            .inspect(move |_| add_probes(probes, 1))
            .filter_map(|s| s.as_mut().map(|(k, v)| (&*k, v)))
    }

    /// Takes every entry out, in no particular order; the table is left
    /// empty.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (K, V)> {
        self.len = 0;
        self.probed(self.slots.len());
        core::mem::replace(&mut self.slots, KVVec::new())
            .into_iter()
            .flatten()
    }

    /// Drops every entry; the table is left empty.
    pub(crate) fn clear(&mut self) {
        self.drain().for_each(drop);
    }
}

/// Adds `n` to a table's count of slots examined (wrapping).
fn add_probes(probes: &Cell<u64>, n: usize) {
    probes.set(probes.get().wrapping_add(n as u64));
}

impl<B: Copy + Eq, V> Index<(usize, B), V> {
    /// Every `b` for which `(a, b)` is a key, in no particular order:
    /// O(1 + their number) expected.
    pub(crate) fn seconds(&self, a: usize) -> impl Iterator<Item = B> + '_ {
        let mut i = (self.len != 0).then(|| self.home(a as u64));
        core::iter::from_fn(move || loop {
            let at = i?;
            self.probed(1);
            let Some((k, _)) = &self.slots[at] else {
                i = None;
                return None;
            };
            i = Some((at + 1) & self.mask());
            if k.0 == a {
                return Some(k.1);
            }
        })
    }

    /// One `b` for which `(a, b)` is a key.
    pub(crate) fn first(&self, a: usize) -> Option<B> {
        self.seconds(a).next()
    }
}
