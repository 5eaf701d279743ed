// SPDX-License-Identifier: GPL-2.0

//! Networking.

pub mod device;
pub mod genetlink;
#[cfg(any(CONFIG_MACSEC, CONFIG_MACSEC_MODULE))]
pub mod macsec;
pub mod namespace;
pub mod notifier;
#[cfg(CONFIG_RUST_PHYLIB_ABSTRACTIONS)]
pub mod phy;
pub mod rtnl;
