// SPDX-License-Identifier: GPL-2.0
//! The tcx program of `dranet-sec audit` (`bpf/audit.bpf.c`, compiled by
//! the build with clang), loaded and attached with aya: one instance per
//! audited device, so each device has its own counters and ring buffer
//! whatever namespace it is in.

use crate::audit::{self, Counts, Dir};
use anyhow::{anyhow, Context as _, Result};
use aya::maps::{MapData, PerCpuArray, RingBuf};
use aya::programs::tc::{SchedClassifier, TcAttachOptions, TcAttachType};
use aya::programs::LinkOrder;
use aya::Ebpf;

/// The object the build compiled from `bpf/audit.bpf.c`.
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/audit.bpf.o"));

/// The program attached to both directions of one device. Dropping it
/// detaches it (the links are owned by the programs in `ebpf`).
pub struct Tap {
    pub name: String,
    pub ifindex: u32,
    _ebpf: Ebpf,
    counters: PerCpuArray<MapData, u64>,
    samples: RingBuf<MapData>,
}

impl Tap {
    /// Loads the program and attaches it, as a tcx link, to the ingress
    /// and egress of `name`, a device of the calling thread's namespace.
    pub fn attach(name: &str) -> Result<Tap> {
        let ifindex = crate::discover::ifindex(name)?;
        let mut ebpf = Ebpf::load(OBJECT).context("loading the audit program")?;
        for (prog, at) in [
            ("audit_ingress", TcAttachType::Ingress),
            ("audit_egress", TcAttachType::Egress),
        ] {
            let p: &mut SchedClassifier = ebpf
                .program_mut(prog)
                .ok_or_else(|| anyhow!("the object has no program {prog}"))?
                .try_into()?;
            p.load().with_context(|| format!("loading {prog}"))?;
            p.attach_with_options(name, at, TcAttachOptions::TcxOrder(LinkOrder::default()))
                .with_context(|| format!("attaching {prog} to {name} (tcx)"))?;
        }
        let counters = PerCpuArray::try_from(
            ebpf.take_map("counters")
                .ok_or_else(|| anyhow!("the object has no map counters"))?,
        )?;
        let samples = RingBuf::try_from(
            ebpf.take_map("samples")
                .ok_or_else(|| anyhow!("the object has no map samples"))?,
        )?;
        Ok(Tap {
            name: name.to_string(),
            ifindex,
            _ebpf: ebpf,
            counters,
            samples,
        })
    }

    /// The counters of one direction, summed over the CPUs.
    pub fn counts(&self, dir: Dir) -> Result<Counts> {
        let mut c = Counts::default();
        for (i, n) in c.iter_mut().enumerate() {
            let key = (dir as usize * audit::COUNTERS.len() + i) as u32;
            *n = self.counters.get(&key, 0)?.iter().sum();
        }
        Ok(c)
    }

    /// Hands every sample queued so far to `f`; returns how many.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<usize> {
        let mut n = 0;
        while let Some(item) = self.samples.next() {
            f(&item)?;
            n += 1;
        }
        Ok(n)
    }
}
