// SPDX-License-Identifier: GPL-2.0
//! ResourceSlices for one node: one pool named after the node, as DRANet
//! publishes it, split into slices of at most 128 devices.

use crate::attrs::{self, NetDev, MAX_DEVICES_PER_SLICE};
use crate::state::PortState;
use anyhow::{bail, Result};
use k8s_openapi::api::resource::v1::{Device, ResourcePool, ResourceSlice, ResourceSliceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeSet;

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
}

/// A device name as DRANet makes it: `pci-0000-10-1b-0` for a PCI
/// function, else the interface name, as an RFC 1123 label.
pub fn device_name(dev: &NetDev) -> String {
    let raw = match &dev.pci_address {
        Some(a) => format!("pci-{a}"),
        None => dev.ifname.clone(),
    };
    let mut s: String = raw
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.truncate(63);
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "dev".to_string()
    } else {
        s
    }
}

/// The devices of `devs`, with their DRANet and MACsec attributes; `ports`
/// is the kernel's view (matched by interface name). Returns the devices
/// and the warnings about what was left out.
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
    let mut sorted: Vec<&NetDev> = devs.iter().collect();
    sorted.sort_by(|a, b| {
        device_name(a)
            .cmp(&device_name(b))
            .then(a.ifname.cmp(&b.ifname))
    });
    for dev in sorted {
        let mut name = device_name(dev);
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
        let port = ports.iter().find(|p| p.ifname == dev.ifname);
        let mut a = attrs::dranet_attributes(&opts.driver, dev);
        a.extend(attrs::macsec_attributes(&opts.domain, port));
        for w in attrs::fit(&mut a, &opts.domain) {
            warnings.push(format!("{name}: {w}"));
        }
        out.push(Device {
            name,
            attributes: Some(a),
            ..Default::default()
        });
    }
    Ok((out, warnings))
}

/// The node's pool as slices of at most [`MAX_DEVICES_PER_SLICE`] devices,
/// each naming how many slices the pool has.
pub fn slices(opts: &Options, devices: Vec<Device>) -> Vec<ResourceSlice> {
    let chunks: Vec<Vec<Device>> = if devices.is_empty() {
        vec![Vec::new()]
    } else {
        devices
            .chunks(MAX_DEVICES_PER_SLICE)
            .map(|c| c.to_vec())
            .collect()
    };
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
