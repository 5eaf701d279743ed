// SPDX-License-Identifier: GPL-2.0

//! The tracked ports: every netdev that backs a port of an RDMA device.
//!
//! The RDMA core does not pass its client to `add`/`remove`, so the table is
//! a module-wide singleton, published while the client is registered.

use crate::lockstep::{Knowledge, Port};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::net::device::NetDevice;
use kernel::rdma::{Client, ClientRegistration, Device};
use kernel::sync::{Arc, Mutex};
use kernel::types::ARef;
use kernel::{c_str, new_mutex, prelude::*};

/// One tracked port.
pub(crate) struct Entry {
    /// The netdev.
    pub(crate) dev: ARef<NetDevice>,
    /// The RDMA devices on it: (identity, name).
    pub(crate) rdma: KVec<(usize, KVec<u8>)>,
    /// The lockstep state.
    pub(crate) port: Port,
}

/// The table of tracked ports.
#[pin_data]
pub(crate) struct Table {
    #[pin]
    pub(crate) entries: Mutex<KVec<Option<Entry>>>,
}

/// The published table; null while no client is registered.
static TABLE: AtomicPtr<Table> = AtomicPtr::new(core::ptr::null_mut());

/// Runs `f` on the table, if the module is tracking ports.
pub(crate) fn with_table<R>(f: impl FnOnce(&Table) -> R) -> Option<R> {
    let ptr = TABLE.load(Ordering::Acquire);
    // SAFETY: a non-null `TABLE` comes from `Arc::into_raw` in `start` and is
    // only released in `Tracking::drop` after the RDMA client and the
    // family (the only callers) are gone.
    (!ptr.is_null()).then(|| f(unsafe { &*ptr }))
}

struct RdmaPorts;

impl Client for RdmaPorts {
    const NAME: &'static CStr = c_str!("macsec_bridge");

    fn add(ib: &Device) -> Result {
        let mut name = KVec::new();
        name.extend_from_slice(ib.name().as_bytes(), GFP_KERNEL)?;
        with_table(|t| -> Result {
            let mut entries = t.entries.lock();
            for p in ib.ports() {
                let Some(dev) = ib.netdev(p) else { continue };
                let slot = entries
                    .iter_mut()
                    .find(|e| e.as_ref().is_some_and(|e| *e.dev == *dev));
                let entry = match slot {
                    Some(Some(e)) => e,
                    _ => {
                        entries.push(
                            Some(Entry {
                                dev,
                                rdma: KVec::new(),
                                port: Port::new(Knowledge::Unknown),
                            }),
                            GFP_KERNEL,
                        )?;
                        match entries.last_mut() {
                            Some(Some(e)) => e,
                            _ => return Err(EINVAL),
                        }
                    }
                };
                if !entry.rdma.iter().any(|(id, _)| *id == ib.id()) {
                    let mut n = KVec::new();
                    n.extend_from_slice(&name, GFP_KERNEL)?;
                    entry.rdma.push((ib.id(), n), GFP_KERNEL)?;
                }
            }
            Ok(())
        })
        .unwrap_or(Ok(()))
    }

    fn remove(ib: &Device) {
        with_table(|t| {
            let mut entries = t.entries.lock();
            for slot in entries.iter_mut() {
                let Some(e) = slot else { continue };
                let mut kept = KVec::new();
                for (id, n) in core::mem::replace(&mut e.rdma, KVec::new()) {
                    if id != ib.id() {
                        // Pushing into a fresh vector of at most the same
                        // length; on allocation failure the name is lost,
                        // the port stays tracked.
                        let _ = kept.push((id, n), GFP_KERNEL);
                    }
                }
                e.rdma = kept;
                if e.rdma.is_empty() {
                    *slot = None;
                }
            }
        });
    }
}

/// Port tracking, running while this exists.
pub(crate) struct Tracking {
    table: *const Table,
    client: Option<Pin<KBox<ClientRegistration<RdmaPorts>>>>,
}

// SAFETY: `table` is an `Arc<Table>` reference owned by this value; `Table`
// is `Send + Sync` (its contents are behind a mutex).
unsafe impl Send for Tracking {}
// SAFETY: as above; `&Tracking` exposes nothing.
unsafe impl Sync for Tracking {}

impl Tracking {
    /// Publishes an empty table and registers the RDMA client, which adds
    /// the ports of the RDMA devices that already exist.
    pub(crate) fn start() -> Result<Tracking> {
        let table = Arc::pin_init(
            pin_init!(Table {
                entries <- new_mutex!(KVec::new(), "macsec_bridge:ports"),
            }),
            GFP_KERNEL,
        )?;
        let raw: *const Table = Arc::into_raw(table);
        TABLE.store(raw.cast_mut(), Ordering::Release);
        let mut t = Tracking {
            table: raw,
            client: None,
        };
        t.client = Some(KBox::pin_init(ClientRegistration::new(), GFP_KERNEL)?);
        Ok(t)
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        // Unregistering runs `remove` for every device: no callback after.
        drop(self.client.take());
        TABLE.store(core::ptr::null_mut(), Ordering::Release);
        // SAFETY: `table` came from `Arc::into_raw` in `start` and nobody
        // reads it any more (the family is unregistered before us).
        drop(unsafe { Arc::from_raw(self.table) });
    }
}
