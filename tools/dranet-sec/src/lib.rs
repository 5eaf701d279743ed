// SPDX-License-Identifier: GPL-2.0
//! DRANet-Sec: the `macsec_bridge` kernel state as Kubernetes DRA device
//! attributes, and placement of claims by CEL selectors on them.

pub mod attrs;
pub mod audit;
pub mod discover;
pub mod docs;
pub mod genl;
pub mod pciids;
pub mod place;
pub mod rtnl;
pub mod rules;
pub mod slice;
pub mod state;
pub mod taint;
pub mod tap;
pub mod watch;
pub mod webhook;
