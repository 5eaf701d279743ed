// SPDX-License-Identifier: GPL-2.0
//! PCI vendor and device names, as DRANet publishes them.
//!
//! DRANet's `dra.net/pciVendor` and `dra.net/pciDevice` are the names
//! the PCI ID database (`pci.ids`) gives the function's ids (ghw's
//! `pcidb`), `unknown` for an id the database does not list; with no
//! database at all ghw finds no PCI device and DRANet publishes neither.
//! This module does the same, so a claim written against DRANet's slice
//! (`device.attributes["dra.net"].pciVendor == "Mellanox Technologies"`)
//! means the same against this one.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// What ghw names an id its database does not list.
pub const UNKNOWN: &str = "unknown";

/// Where ghw's `pcidb` looks for the database (uncompressed), in order.
pub const PATHS: &[&str] = &["/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids"];

/// The vendors of a `pci.ids` file, each with its devices, by id.
#[derive(Debug, Default)]
pub struct PciIds {
    vendors: HashMap<u16, (String, HashMap<u16, String>)>,
}

/// A 4-digit hexadecimal id followed by two spaces and a name.
fn entry(line: &str) -> Option<(u16, String)> {
    let (id, name) = line.split_once("  ")?;
    if id.len() != 4 {
        return None;
    }
    let id = u16::from_str_radix(id, 16).ok()?;
    Some((id, name.trim().to_string()))
}

/// An id as sysfs shows it (`0x15b3`).
fn sysfs_id(s: &str) -> Option<u16> {
    u16::from_str_radix(s.trim().strip_prefix("0x")?, 16).ok()
}

impl PciIds {
    /// Parses the text of a `pci.ids` file: vendors at the start of a
    /// line, their devices after one tab; subsystems (two tabs) and
    /// comments are skipped, and the device classes at the end (`C 02 …`)
    /// end the vendor list.
    pub fn parse(text: &str) -> PciIds {
        let mut ids = PciIds::default();
        let mut vendor = None;
        for line in text.lines() {
            if line.starts_with("C ") {
                break;
            }
            if line.starts_with('#') || line.trim().is_empty() || line.starts_with("\t\t") {
                continue;
            }
            if let Some(dev) = line.strip_prefix('\t') {
                if let (Some(v), Some((id, name))) = (vendor, entry(dev)) {
                    if let Some((_, devices)) = ids.vendors.get_mut(&v) {
                        devices.insert(id, name);
                    }
                }
                continue;
            }
            vendor = entry(line).map(|(id, name)| {
                ids.vendors.insert(id, (name, HashMap::new()));
                id
            });
        }
        ids
    }

    /// Reads the database at the first of `paths` that can be read.
    pub fn load(paths: &[&str]) -> Option<PciIds> {
        paths
            .iter()
            .find_map(|p| std::fs::read_to_string(Path::new(p)).ok())
            .map(|t| PciIds::parse(&t))
    }

    /// The system's database, read once ([`PATHS`]).
    pub fn system() -> Option<&'static PciIds> {
        static DB: OnceLock<Option<PciIds>> = OnceLock::new();
        DB.get_or_init(|| PciIds::load(PATHS)).as_ref()
    }

    /// The names of the vendor and device whose ids sysfs shows as
    /// `vendor` and `device` (`0x15b3`, `0x101d`): [`UNKNOWN`] for what the
    /// database does not list, as ghw names it; `None` for an id sysfs
    /// did not give.
    pub fn names(
        &self,
        vendor: Option<&str>,
        device: Option<&str>,
    ) -> (Option<String>, Option<String>) {
        let v = vendor.and_then(sysfs_id);
        let listed = v.and_then(|v| self.vendors.get(&v));
        let vname = v.map(|_| listed.map_or(UNKNOWN, |(n, _)| n.as_str()).to_string());
        let dname = device.and_then(sysfs_id).map(|d| {
            listed
                .and_then(|(_, devs)| devs.get(&d))
                .map_or(UNKNOWN, String::as_str)
                .to_string()
        });
        (vname, dname)
    }
}
