// SPDX-License-Identifier: GPL-2.0
//! ResourceSlices for one node: one pool named after the node, as DRANet
//! publishes it, split into slices of at most 128 devices, or 64 where a
//! slice holds a tainted device.

use crate::attrs::{self, NetDev, MAX_DEVICES_PER_SLICE};
use crate::audit::{self, Verdict};
use crate::state::PortState;
use crate::taint::{self, Effect, MAX_DEVICES_PER_TAINTED_SLICE, MAX_TAINTS_PER_DEVICE};
use anyhow::{bail, Result};
use k8s_openapi::api::resource::v1::{Device, ResourcePool, ResourceSlice, ResourceSliceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::{BTreeMap, BTreeSet};

/// What a slice is published as.
#[derive(Clone, Debug)]
pub struct Options {
    pub node: String,
    /// The DRA driver, and the domain of its own attributes (`dra.net`).
    pub driver: String,
    /// The domain of the MACsec attributes.
    pub domain: String,
    /// The pool's generation: grows with every new set of slices.
    pub generation: i64,
    /// The effect of the taint on an unprotected RDMA port.
    pub effect: Effect,
    /// What the wire said of each port, by interface name (`audit`).
    pub wire: BTreeMap<String, Verdict>,
    /// DRANet's uplinks and the links enslaved to them, by name
    /// ([`crate::rtnl::uplinks`]): never published.
    pub uplinks: BTreeSet<String>,
    /// Publish veths too, as DRANet does with a `--filter` that keeps
    /// them; its default leaves them out.
    pub include_veth: bool,
}

/// Interface names DRANet never publishes (`ignoredInterfaceNames`).
pub const IGNORED: [&str; 3] = ["cilium_net", "cilium_host", "docker0"];

/// Whether DRANet publishes `dev`: not an ignored name, not an uplink nor
/// enslaved to one, and not a veth unless `include_veth` (DRANet's
/// default `--filter` is `!("dra.net/type" in attributes) ||
/// attributes["dra.net/type"].StringValue != "veth"`). A netdev whose kind
/// was not read is kept, as that filter keeps a device without a type.
/// Loopback is never a device ([`crate::discover::netdev`]).
pub fn published(opts: &Options, dev: &NetDev) -> bool {
    !IGNORED.contains(&dev.ifname.as_str())
        && !opts.uplinks.contains(&dev.ifname)
        && (opts.include_veth || dev.kind.as_deref() != Some("veth"))
}

/// RFC 4648 base32, lower case, without padding.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = (acc << 8) | b as u32;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The bytes of `s`, RFC 4648 base32 as [`base32`] writes it; `None` for
/// anything else (a letter outside the alphabet, or leftover bits set).
fn unbase32(s: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 5) | v;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (acc == 0).then_some(out)
}

/// What a DRANet device name names: a PCI function by its address, or an
/// interface by its name (see [`device_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    Pci(String),
    Interface(String),
}

/// The inverse of [`device_name`]: `pci-0000-10-1b-0` is PCI function
/// `0000:10:1b.0`, `net-…` the interface its base32 spells, any other
/// name an interface of that name.
pub fn named(name: &str) -> Named {
    if let Some(rest) = name.strip_prefix("pci-") {
        let b = rest.as_bytes();
        if b.len() == 12 && b[4] == b'-' && b[7] == b'-' && b[10] == b'-' {
            let a = format!(
                "{}:{}:{}.{}",
                &rest[..4],
                &rest[5..7],
                &rest[8..10],
                &rest[11..]
            );
            if crate::discover::is_pci_address(&a) {
                return Named::Pci(a);
            }
        }
    }
    if let Some(ifname) = name
        .strip_prefix("net-")
        .and_then(unbase32)
        .and_then(|b| String::from_utf8(b).ok())
    {
        return Named::Interface(ifname);
    }
    Named::Interface(name.to_string())
}

/// A device name as DRANet makes it (`pkg/names/names.go`): a PCI
/// function is `pci-` and its address with `:` and `.` as `-`
/// (`pci-0000-10-1b-0`); an interface name that is a DNS label is itself;
/// any other is `net-` and its base32 (lower case, no padding).
pub fn device_name(dev: &NetDev) -> String {
    if let Some(a) = &dev.pci_address {
        return format!("pci-{}", a.replace([':', '.'], "-"));
    }
    if dev.ifname.is_empty() || attrs::is_dns_label(&dev.ifname) {
        return dev.ifname.clone();
    }
    format!("net-{}", base32(dev.ifname.as_bytes()))
}

/// The devices of `devs` that DRANet publishes ([`published`]), with
/// their DRANet and MACsec attributes; `ports` is the kernel's view
/// (matched by interface name). Returns the devices and the warnings about
/// what was left out for the API's sake.
pub fn devices(
    opts: &Options,
    devs: &[NetDev],
    ports: &[PortState],
) -> Result<(Vec<Device>, Vec<String>)> {
    if !attrs::is_domain(&opts.domain) {
        bail!(
            "--domain {:?} is not a DNS subdomain of at most {} characters",
            opts.domain,
            attrs::MAX_DOMAIN_LEN
        );
    }
    if !attrs::is_domain(&opts.driver) {
        bail!("--driver {:?} is not a DNS subdomain", opts.driver);
    }
    let mut warnings = Vec::new();
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    let mut sorted: Vec<(String, &NetDev)> = devs
        .iter()
        .filter(|d| published(opts, d))
        .map(|d| (device_name(d), d))
        .collect();
    sorted.sort_by(|(a, x), (b, y)| a.cmp(b).then(x.ifname.cmp(&y.ifname)));
    let ports = crate::state::by_ifname(ports);
    for (mut name, dev) in sorted {
        if !names.insert(name.clone()) {
            // Two functions of one PCI device, or normalised names
            // colliding: the interface name tells them apart.
            let alt = device_name(&NetDev {
                pci_address: None,
                ..dev.clone()
            });
            name = format!(
                "{}-{}",
                &name[..name.len().min(62 - alt.len().min(30))],
                &alt[..alt.len().min(30)]
            );
            if !names.insert(name.clone()) {
                warnings.push(format!(
                    "{}: device name {name} taken, left out",
                    dev.ifname
                ));
                continue;
            }
        }
        let port = ports.get(dev.ifname.as_str()).copied();
        let mut a = attrs::dranet_attributes(&opts.driver, dev);
        a.extend(attrs::macsec_attributes(&opts.domain, port));
        // What the wire said, for an audited port: `macsecWireVerified`,
        // and, where the port claims protection the wire denies, the
        // taint with the verdict as its reason.
        let wire = port.and(opts.wire.get(dev.ifname.as_str()).copied());
        if let Some(v) = wire {
            a.insert(
                format!("{}/macsecWireVerified", opts.domain),
                attrs::bool_attr(v == Verdict::Verified),
            );
        }
        for w in attrs::fit(&mut a, &opts.domain) {
            warnings.push(format!("{name}: {w}"));
        }
        let reason = taint::reason(dev, port).or_else(|| match (port, wire) {
            (Some(p), Some(v)) if audit::contradicts(p, v) => Some(v.as_str().to_string()),
            _ => None,
        });
        let taints = reason.map(|r| vec![taint::taint(&opts.domain, opts.effect, &r)]);
        out.push(Device {
            name,
            attributes: Some(a),
            taints,
            ..Default::default()
        });
    }
    Ok((out, warnings))
}

fn tainted(d: &Device) -> bool {
    d.taints.as_ref().is_some_and(|t| !t.is_empty())
}

/// `devices` in order, cut where the next device would break a slice's
/// limit: 128 devices, or 64 once one of them is tainted.
fn chunks(devices: Vec<Device>) -> Vec<Vec<Device>> {
    let mut out: Vec<Vec<Device>> = vec![Vec::new()];
    let mut has_taint = false;
    for d in devices {
        let t = tainted(&d);
        let cur = out.len() - 1;
        let limit = if has_taint || t {
            MAX_DEVICES_PER_TAINTED_SLICE
        } else {
            MAX_DEVICES_PER_SLICE
        };
        if out[cur].len() + 1 > limit {
            out.push(Vec::new());
            has_taint = false;
        }
        has_taint |= t;
        let last = out.len() - 1;
        out[last].push(d);
    }
    out
}

/// The node's pool as slices within the API server's limits, each naming
/// how many slices the pool has.
pub fn slices(opts: &Options, devices: Vec<Device>) -> Vec<ResourceSlice> {
    let chunks = chunks(devices);
    let count = chunks.len() as i64;
    let base = format!("{}-{}", opts.node, opts.driver.replace('.', "-"));
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, devs)| ResourceSlice {
            metadata: ObjectMeta {
                name: Some(format!("{base}-{i}")),
                ..Default::default()
            },
            spec: ResourceSliceSpec {
                driver: opts.driver.clone(),
                node_name: Some(opts.node.clone()),
                pool: ResourcePool {
                    name: opts.node.clone(),
                    generation: opts.generation,
                    resource_slice_count: count,
                },
                devices: Some(devs),
                ..Default::default()
            },
        })
        .collect()
}

/// What the API server would refuse in `slices`, the slices of one pool:
/// the limits of `resource.k8s.io/v1` (devices per slice, attributes,
/// taints) and the pool's slice count. Empty when all is well.
pub fn problems(slices: &[ResourceSlice]) -> Vec<String> {
    let mut out = Vec::new();
    for s in slices {
        let name = s.metadata.name.as_deref().unwrap_or("?");
        if s.spec.pool.resource_slice_count != slices.len() as i64 {
            out.push(format!(
                "{name}: resourceSliceCount {} but the pool has {} slices",
                s.spec.pool.resource_slice_count,
                slices.len()
            ));
        }
        let devs = s.spec.devices.as_deref().unwrap_or_default();
        let limit = if devs.iter().any(tainted) {
            MAX_DEVICES_PER_TAINTED_SLICE
        } else {
            MAX_DEVICES_PER_SLICE
        };
        if devs.len() > limit {
            out.push(format!("{name}: {} devices, at most {limit}", devs.len()));
        }
        for d in devs {
            if !attrs::is_dns_label(&d.name) {
                out.push(format!("{name}: device name {:?}", d.name));
            }
            let a = d.attributes.as_ref();
            if a.map_or(0, |a| a.len()) > attrs::MAX_ATTRS {
                out.push(format!("{name}/{}: too many attributes", d.name));
            }
            for (k, v) in a.into_iter().flatten() {
                if let Err(e) = attrs::check(k, v) {
                    out.push(format!("{name}/{}: {e}", d.name));
                }
            }
            let taints = d.taints.as_deref().unwrap_or_default();
            if taints.len() > MAX_TAINTS_PER_DEVICE {
                out.push(format!("{name}/{}: {} taints", d.name, taints.len()));
            }
            for t in taints {
                if !taint::is_label_name(&t.key) {
                    out.push(format!("{name}/{}: taint key {:?}", d.name, t.key));
                }
                if !taint::is_label_value(t.value.as_deref().unwrap_or("")) {
                    out.push(format!("{name}/{}: taint value {:?}", d.name, t.value));
                }
                if !["None", "NoSchedule", "NoExecute"].contains(&t.effect.as_str()) {
                    out.push(format!("{name}/{}: taint effect {:?}", d.name, t.effect));
                }
            }
        }
    }
    out
}
