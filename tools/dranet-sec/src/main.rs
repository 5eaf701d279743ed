// SPDX-License-Identifier: GPL-2.0
//! `dranet-sec`: see `dranet-sec --help`.

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use dranet_sec::state::PortState;
use dranet_sec::{attrs, discover, docs, genl, place, slice, webhook};
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The default domain of the MACsec attributes. Set your own with
/// `--domain`: attribute domains should be ones you control.
const DOMAIN: &str = "macsec.dranet-sec.io";

#[derive(Parser)]
#[command(
    version,
    about = "MACsec-protected RDMA egress as Kubernetes DRA device attributes"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// One row per RDMA port: RDMA device, netdev, protection, reason,
    /// relation, SecY, generation.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// One line per dev-change-ntf.
    Monitor {
        #[arg(long)]
        json: bool,
    },
    /// The node's ResourceSlice(s): DRANet's attributes plus the MACsec ones.
    Slice {
        #[arg(long)]
        node: String,
        /// The DRA driver (and domain of its own attributes).
        #[arg(long, default_value = "dra.net")]
        driver: String,
        /// The domain of the MACsec attributes.
        #[arg(long, default_value = DOMAIN)]
        domain: String,
        #[arg(long, value_enum, default_value_t = Output::Yaml)]
        output: Output,
        /// Re-emit on every notification (JSON: one document per line).
        #[arg(long)]
        watch: bool,
        /// Where sysfs is.
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
    },
    /// A DRANet webhook provider on a unix socket.
    Webhook {
        #[arg(long)]
        socket: PathBuf,
        #[arg(long, default_value = DOMAIN)]
        domain: String,
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
    },
    /// Where a ResourceClaim would go: evaluate its DeviceClass and request
    /// CEL selectors against ResourceSlices, as the scheduler does.
    Place {
        /// Multi-document YAML with the ResourceClaim and its DeviceClasses.
        #[arg(long)]
        claim: String,
        /// ResourceSlices (YAML, JSON, or JSON lines), from any nodes.
        #[arg(long, num_args = 1.., required = true)]
        slices: Vec<String>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    Yaml,
    Json,
}

fn secy(p: &PortState) -> String {
    match (p.secy_ifindex, p.secy_netnsid) {
        (Some(i), Some(n)) => format!("{i}@nsid{n}"),
        (Some(i), None) => i.to_string(),
        _ => "-".to_string(),
    }
}

fn row(p: &PortState) -> String {
    let rdma = if p.rdma_dev.is_empty() {
        "-".to_string()
    } else {
        p.rdma_dev.join(",")
    };
    format!(
        "{:<12} {:<12} {:<12} {:<16} {:<8} {:<10} {}",
        rdma,
        p.ifname,
        p.protection,
        p.reason,
        p.relation.as_deref().unwrap_or("-"),
        secy(p),
        p.generation
    )
}

const HEADER: &str =
    "RDMA         NETDEV       PROTECTION   REASON           RELATION SECY       GENERATION";

fn status(json: bool) -> Result<bool> {
    let ports = genl::Client::connect()?.dump()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&ports)?);
    } else {
        println!("{HEADER}");
        for p in &ports {
            println!("{}", row(p));
        }
    }
    Ok(true)
}

fn monitor(json: bool) -> Result<bool> {
    let mut c = genl::Client::connect()?;
    c.subscribe()?;
    let mut out = std::io::stdout();
    loop {
        let p = c.next_change()?;
        if json {
            writeln!(out, "{}", serde_json::to_string(&p)?)?;
        } else {
            writeln!(out, "{}", row(&p))?;
        }
        out.flush()?;
    }
}

fn emit(slices: &[ResourceSlice], output: Output, watch: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for s in slices {
        match (output, watch) {
            (Output::Json, true) => writeln!(out, "{}", serde_json::to_string(s)?)?,
            (Output::Json, false) => writeln!(out, "{}", serde_json::to_string_pretty(s)?)?,
            (Output::Yaml, _) => write!(out, "---\n{}", serde_yaml::to_string(s)?)?,
        }
    }
    out.flush()?;
    Ok(())
}

fn build(opts: &slice::Options, sysfs: &Path, ports: &[PortState]) -> Result<Vec<ResourceSlice>> {
    let devs = discover::netdevs(sysfs)?;
    let (devices, warnings) = slice::devices(opts, &devs, ports)?;
    for w in warnings {
        eprintln!("dranet-sec: {w}");
    }
    Ok(slice::slices(opts, devices))
}

fn run_slice(
    node: String,
    driver: String,
    domain: String,
    output: Output,
    watch: bool,
    sysfs: &Path,
) -> Result<bool> {
    let mut c = genl::Client::connect()?;
    // Subscribed before the first dump: no change falls in between.
    if watch {
        c.subscribe()?;
    }
    let mut opts = slice::Options {
        node,
        driver,
        domain,
        generation: 1,
    };
    emit(&build(&opts, sysfs, &c.dump()?)?, output, watch)?;
    if !watch {
        return Ok(true);
    }
    loop {
        c.next_change()?;
        opts.generation += 1;
        emit(&build(&opts, sysfs, &c.dump()?)?, output, watch)?;
    }
}

fn run_webhook(socket: &Path, domain: &str, sysfs: &Path) -> Result<bool> {
    if !attrs::is_domain(domain) {
        anyhow::bail!("--domain {domain:?} is not a DNS subdomain");
    }
    let lookup = |q: &webhook::DeviceQuery| -> Result<webhook::Attributes> {
        let devs = discover::netdevs(sysfs)?;
        let dev = devs.iter().find(|d| {
            (!q.name.is_empty() && (q.name == d.ifname || q.name == slice::device_name(d)))
                || (!q.pci_address.is_empty()
                    && d.pci_address.as_deref() == Some(q.pci_address.as_str()))
                || (!q.mac_address.is_empty()
                    && d.mac
                        .as_deref()
                        .is_some_and(|m| m.eq_ignore_ascii_case(&q.mac_address)))
        });
        let ports = match dev {
            Some(_) => genl::Client::connect()?.dump()?,
            None => Vec::new(),
        };
        let port = dev.and_then(|d| ports.iter().find(|p| p.ifname == d.ifname));
        Ok(attrs::macsec_attributes(domain, port))
    };
    webhook::serve(socket, &lookup, &|| {
        eprintln!("dranet-sec: webhook listening on {}", socket.display())
    })?;
    Ok(true)
}

fn read(path: &str) -> Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    docs::objects(&text).with_context(|| path.to_string())
}

fn run_place(claim: &str, slices: &[String], json: bool) -> Result<bool> {
    let objs = read(claim)?;
    let claims: Vec<ResourceClaim> = docs::of_kind(&objs, "ResourceClaim")?;
    let classes: Vec<DeviceClass> = docs::of_kind(&objs, "DeviceClass")?;
    let [claim] = claims.as_slice() else {
        anyhow::bail!(
            "{claim}: want exactly one ResourceClaim, found {}",
            claims.len()
        );
    };
    let mut all: Vec<ResourceSlice> = Vec::new();
    for f in slices {
        all.extend(docs::of_kind::<ResourceSlice>(&read(f)?, "ResourceSlice")?);
    }
    let p = place::place(claim, &classes, &all)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&p)?);
    } else {
        for a in &p.allocations {
            println!(
                "request {}: node {} pool {} device {}",
                a.request, a.node, a.pool, a.device
            );
        }
        for m in &p.problems {
            println!("unsatisfied: {m}");
        }
        for r in &p.rejected {
            println!("rejected {}/{}: {}", r.node, r.device, r.reason);
        }
    }
    Ok(p.satisfied)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Status { json } => status(json),
        Cmd::Monitor { json } => monitor(json),
        Cmd::Slice {
            node,
            driver,
            domain,
            output,
            watch,
            sysfs,
        } => run_slice(node, driver, domain, output, watch, &sysfs),
        Cmd::Webhook {
            socket,
            domain,
            sysfs,
        } => run_webhook(&socket, &domain, &sysfs),
        Cmd::Place {
            claim,
            slices,
            json,
        } => run_place(&claim, &slices, json),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("dranet-sec: {e:#}");
            ExitCode::from(2)
        }
    }
}
