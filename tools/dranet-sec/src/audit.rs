// SPDX-License-Identifier: GPL-2.0
//! Truth on the wire: what `dranet-sec audit` makes of the frames its tcx
//! program (`bpf/audit.bpf.c`) counted on each wire, joined with what each
//! port advertises.
//!
//! The kernel module keeps a port's *advertised* protection in lockstep
//! with its SecY's control-plane state. Only the wire shows whether frames
//! really leave encrypted: an offload driver that accepts every `mdo_*`
//! and encrypts nothing (netdevsim is one) is advertised as protected.
//! This module holds what can be decided without a kernel: the classes and
//! their counts, the verdict a wire's counts give, which device is a
//! port's wire, and the capture file.

use crate::state::PortState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The classes of the tcx program, in its order (`enum class`), then the
/// samples the ring buffer had no room for.
pub const COUNTERS: [&str; 7] = [
    "roce",
    "macsec-encrypted",
    "macsec-integrity-roce",
    "macsec-integrity-other",
    "other",
    "malformed",
    "samples-lost",
];
pub const ROCE: usize = 0;
pub const MACSEC_ENC: usize = 1;
pub const MACSEC_ROCE: usize = 2;
pub const MALFORMED: usize = 5;

/// `struct sample` of the tcx program: its header, then up to `SNAPLEN`
/// bytes of the frame.
pub const SAMPLE_HEADER: usize = 24;
pub const SNAPLEN: usize = 192;

/// One direction's counters, in the order of [`COUNTERS`].
pub type Counts = [u64; COUNTERS.len()];

/// A direction of a wire, as the tcx program numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Ingress = 0,
    Egress = 1,
}

/// What the frames seen on a wire say about the RoCE traffic on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// RoCE was seen in the clear (in either direction).
    PlaintextOnWire,
    /// No cleartext RoCE, but RoCE inside SecTAGs without the E bit:
    /// authenticated, readable by anyone on the wire.
    IntegrityOnly,
    /// No RoCE outside an encrypting SecTAG, and encrypted frames seen.
    /// An encrypted frame cannot be read: what it carries is unknown.
    Verified,
    /// Neither RoCE nor encrypted frames: nothing to judge.
    NoTraffic,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::PlaintextOnWire => "plaintext-on-wire",
            Verdict::IntegrityOnly => "integrity-only",
            Verdict::Verified => "verified",
            Verdict::NoTraffic => "no-traffic",
        }
    }
}

/// The verdict of a wire's counters, both directions together: the worst
/// thing seen decides. Malformed frames are counted, never read as RoCE
/// or as MACsec, so they decide nothing.
pub fn verdict(ingress: &Counts, egress: &Counts) -> Verdict {
    let n = |i: usize| ingress[i] + egress[i];
    if n(ROCE) > 0 {
        Verdict::PlaintextOnWire
    } else if n(MACSEC_ROCE) > 0 {
        Verdict::IntegrityOnly
    } else if n(MACSEC_ENC) > 0 {
        Verdict::Verified
    } else {
        Verdict::NoTraffic
    }
}

/// Whether a verdict contradicts what the port advertises: a port that
/// claims protection while its RoCE crosses the wire readable.
pub fn contradicts(port: &PortState, v: Verdict) -> bool {
    port.protection != "none" && matches!(v, Verdict::PlaintextOnWire | Verdict::IntegrityOnly)
}

/// Which device carries a port's frames onto the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// The device of this ifindex, in the namespace of this id as the
    /// reader knows it (`None`: the reader's own).
    At(Option<i32>, u32),
    /// Not known, and why.
    Unknown(String),
}

/// The wire of `port`, with `iflink(nsid, ifindex)` giving a device's link
/// (for a MACsec netdev: its real device) in the namespace of that id
/// (`None`: the reader's own), if it can be had:
/// - `self`: the port is the MACsec netdev; its real device is the wire.
/// - `upper`, or no SecY: the port is the real device itself.
/// - `bound`: the DPU's uplink, the real device of the SecY, in the
///   SecY's namespace.
pub fn wire_of(port: &PortState, iflink: impl Fn(Option<i32>, u32) -> Option<u32>) -> Wire {
    let real = |ns: Option<i32>, ix: u32| match iflink(ns, ix) {
        Some(l) if l != ix => Some(l),
        _ => None,
    };
    match port.relation.as_deref() {
        Some("self") => match real(None, port.ifindex) {
            Some(l) => Wire::At(None, l),
            None => Wire::Unknown(format!("the real device of {} is not known", port.ifname)),
        },
        Some("bound") => match port.secy_ifindex {
            None => Wire::Unknown("the binding is stale: its SecY is gone".to_string()),
            Some(s) => match real(port.secy_netnsid, s) {
                Some(l) => Wire::At(port.secy_netnsid, l),
                None => Wire::Unknown(format!(
                    "the real device of its SecY (ifindex {s}{}) is not known: audit the \
                     DPU's uplink as NETNS:IFNAME",
                    port.secy_netnsid
                        .map_or(String::new(), |n| format!(", nsid {n}"))
                )),
            },
        },
        _ => Wire::At(None, port.ifindex),
    }
}

/// An audited device: its name as given, the id of its namespace as the
/// reader knows it (`None`: the reader's own), its ifindex there, and its
/// counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audited {
    pub name: String,
    pub nsid: Option<i32>,
    pub ifindex: u32,
    pub ingress: Counts,
    pub egress: Counts,
}

/// One audited device's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceReport {
    pub device: String,
    pub ifindex: u32,
    pub ingress: BTreeMap<&'static str, u64>,
    pub egress: BTreeMap<&'static str, u64>,
    pub verdict: Option<Verdict>,
}

/// One port's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct PortReport {
    pub ifname: String,
    pub ifindex: u32,
    pub protection: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    pub wire: String,
    pub verdict: Verdict,
    /// The port claims protection and the wire says otherwise.
    pub contradicts: bool,
    /// The port's SecY is offloaded: the hook sees its frames before the
    /// NIC would encrypt them. On real hardware the verdict is only
    /// meaningful from a mirror port or a tap on the wire.
    pub hook_before_offload: bool,
}

/// A port whose wire was not audited, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unaudited {
    pub ifname: String,
    pub why: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub devices: Vec<DeviceReport>,
    pub ports: Vec<PortReport>,
    pub unaudited: Vec<Unaudited>,
}

fn named(c: &Counts) -> BTreeMap<&'static str, u64> {
    COUNTERS.iter().copied().zip(c.iter().copied()).collect()
}

/// The report: each device's counters and verdict, and each port's
/// verdict from its wire's counters; `iflink` as for [`wire_of`].
pub fn report(
    devices: &[Audited],
    ports: &[PortState],
    iflink: impl Fn(Option<i32>, u32) -> Option<u32>,
) -> Report {
    let mut r = Report::default();
    let by_index: BTreeMap<(Option<i32>, u32), &Audited> =
        devices.iter().map(|d| ((d.nsid, d.ifindex), d)).collect();
    for d in devices {
        r.devices.push(DeviceReport {
            device: d.name.clone(),
            ifindex: d.ifindex,
            ingress: named(&d.ingress),
            egress: named(&d.egress),
            verdict: Some(verdict(&d.ingress, &d.egress)),
        });
    }
    for p in ports {
        match wire_of(p, &iflink) {
            Wire::At(ns, w) => match by_index.get(&(ns, w)) {
                Some(d) => {
                    let v = verdict(&d.ingress, &d.egress);
                    r.ports.push(PortReport {
                        ifname: p.ifname.clone(),
                        ifindex: p.ifindex,
                        protection: p.protection.clone(),
                        reason: p.reason.clone(),
                        relation: p.relation.clone(),
                        wire: d.name.clone(),
                        verdict: v,
                        contradicts: contradicts(p, v),
                        hook_before_offload: p.offloaded(),
                    });
                }
                None => r.unaudited.push(Unaudited {
                    ifname: p.ifname.clone(),
                    why: format!(
                        "its wire (ifindex {w}{}) was not audited",
                        ns.map_or(String::new(), |n| format!(", nsid {n}"))
                    ),
                }),
            },
            Wire::Unknown(why) => r.unaudited.push(Unaudited {
                ifname: p.ifname.clone(),
                why,
            }),
        }
    }
    r
}

/// The verdict of each port in an audit report (`audit --json`), by
/// interface name: what `slice --audit` publishes.
pub fn port_verdicts(report: &str) -> anyhow::Result<BTreeMap<String, Verdict>> {
    #[derive(Deserialize)]
    struct Port {
        ifname: String,
        verdict: Verdict,
    }
    #[derive(Deserialize)]
    struct Doc {
        ports: Vec<Port>,
    }
    let d: Doc = serde_json::from_str(report)?;
    Ok(d.ports.into_iter().map(|p| (p.ifname, p.verdict)).collect())
}

/// A capture in pcapng (what Wireshark and tcpdump open): one interface
/// description per audited device, with its name and nanosecond
/// timestamps, and the direction of every frame.
pub struct Pcapng<W: Write> {
    out: W,
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

impl<W: Write> Pcapng<W> {
    /// Writes the section header and one interface per name.
    pub fn new(mut out: W, interfaces: &[String]) -> io::Result<Self> {
        // Section Header Block: byte-order magic, version 1.0, length
        // unknown.
        let mut shb = Vec::with_capacity(28);
        shb.extend_from_slice(&0x0A0D_0D0Au32.to_le_bytes());
        shb.extend_from_slice(&28u32.to_le_bytes());
        shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        shb.extend_from_slice(&28u32.to_le_bytes());
        out.write_all(&shb)?;
        for name in interfaces {
            let mut opts = Vec::new();
            // if_name
            option(&mut opts, 2, name.as_bytes());
            // if_tsresol: 10^-9 s
            option(&mut opts, 9, &[9]);
            option(&mut opts, 0, &[]);
            let len = 20 + opts.len();
            let mut idb = Vec::with_capacity(len);
            idb.extend_from_slice(&1u32.to_le_bytes());
            idb.extend_from_slice(&(len as u32).to_le_bytes());
            // LINKTYPE_ETHERNET
            idb.extend_from_slice(&1u16.to_le_bytes());
            idb.extend_from_slice(&0u16.to_le_bytes());
            idb.extend_from_slice(&(SNAPLEN as u32).to_le_bytes());
            idb.extend_from_slice(&opts);
            idb.extend_from_slice(&(len as u32).to_le_bytes());
            out.write_all(&idb)?;
        }
        Ok(Pcapng { out })
    }

    /// One frame: `data` is what was captured of `len` bytes, on interface
    /// `iface` (the index of its name in `new`), at `ts_ns` since the epoch.
    pub fn packet(
        &mut self,
        iface: u32,
        ts_ns: u64,
        dir: Dir,
        len: u32,
        data: &[u8],
    ) -> io::Result<()> {
        let mut opts = Vec::new();
        // epb_flags: bits 0-1 are the direction, 1 inbound, 2 outbound.
        let flags: u32 = match dir {
            Dir::Ingress => 1,
            Dir::Egress => 2,
        };
        option(&mut opts, 2, &flags.to_le_bytes());
        option(&mut opts, 0, &[]);
        let total = 32 + pad4(data.len()) + opts.len();
        let mut b = Vec::with_capacity(total);
        b.extend_from_slice(&6u32.to_le_bytes());
        b.extend_from_slice(&(total as u32).to_le_bytes());
        b.extend_from_slice(&iface.to_le_bytes());
        b.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
        b.extend_from_slice(&(ts_ns as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(data);
        b.resize(b.len() + pad4(data.len()) - data.len(), 0);
        b.extend_from_slice(&opts);
        b.extend_from_slice(&(total as u32).to_le_bytes());
        self.out.write_all(&b)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn option(opts: &mut Vec<u8>, code: u16, value: &[u8]) {
    opts.extend_from_slice(&code.to_le_bytes());
    opts.extend_from_slice(&(value.len() as u16).to_le_bytes());
    opts.extend_from_slice(value);
    opts.resize(opts.len() + pad4(value.len()) - value.len(), 0);
}

/// A sample from the ring buffer: (timestamp, frame length, direction,
/// class, captured bytes), or `None` if it is not one the program writes.
pub fn parse_sample(b: &[u8]) -> Option<(u64, u32, Dir, u8, &[u8])> {
    if b.len() < SAMPLE_HEADER + SNAPLEN {
        return None;
    }
    let ts = u64::from_ne_bytes(b[0..8].try_into().ok()?);
    let len = u32::from_ne_bytes(b[8..12].try_into().ok()?);
    let caplen = u32::from_ne_bytes(b[12..16].try_into().ok()?) as usize;
    let dir = match b[16] {
        0 => Dir::Ingress,
        1 => Dir::Egress,
        _ => return None,
    };
    let class = b[17];
    if caplen > SNAPLEN || class as usize > MALFORMED {
        return None;
    }
    Some((
        ts,
        len,
        dir,
        class,
        &b[SAMPLE_HEADER..SAMPLE_HEADER + caplen],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(usize, u64)]) -> Counts {
        let mut c = Counts::default();
        for &(i, n) in pairs {
            c[i] = n;
        }
        c
    }

    fn port(ifindex: u32, protection: &str, relation: Option<&str>) -> PortState {
        PortState {
            ifindex,
            ifname: format!("p{ifindex}"),
            protection: protection.into(),
            reason: "none".into(),
            relation: relation.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn the_worst_frame_seen_decides() {
        let z = Counts::default();
        let enc = counts(&[(MACSEC_ENC, 5), (4, 3)]);
        assert_eq!(verdict(&z, &z), Verdict::NoTraffic);
        // Other frames and malformed ones decide nothing.
        assert_eq!(
            verdict(&counts(&[(4, 9), (MALFORMED, 2)]), &z),
            Verdict::NoTraffic
        );
        assert_eq!(verdict(&enc, &z), Verdict::Verified);
        assert_eq!(verdict(&z, &enc), Verdict::Verified);
        // One integrity-only RoCE frame, in either direction, spoils it.
        assert_eq!(
            verdict(&enc, &counts(&[(MACSEC_ROCE, 1)])),
            Verdict::IntegrityOnly
        );
        // One cleartext RoCE frame beats everything.
        let all = counts(&[(ROCE, 1), (MACSEC_ROCE, 1), (MACSEC_ENC, 100)]);
        assert_eq!(verdict(&z, &all), Verdict::PlaintextOnWire);
        assert_eq!(
            verdict(&counts(&[(ROCE, 1)]), &enc),
            Verdict::PlaintextOnWire
        );
    }

    #[test]
    fn only_a_claim_of_protection_is_contradicted() {
        for (prot, v, want) in [
            ("offload-mac", Verdict::PlaintextOnWire, true),
            ("offload-phy", Verdict::IntegrityOnly, true),
            ("offload-mac", Verdict::Verified, false),
            ("offload-mac", Verdict::NoTraffic, false),
            ("none", Verdict::PlaintextOnWire, false),
            ("none", Verdict::Verified, false),
        ] {
            assert_eq!(
                contradicts(&port(1, prot, Some("self")), v),
                want,
                "{prot} {v:?}"
            );
        }
    }

    fn bound(ifindex: u32, secy: Option<u32>, nsid: Option<i32>) -> PortState {
        PortState {
            secy_ifindex: secy,
            secy_netnsid: nsid,
            ..port(ifindex, "offload-mac", Some("bound"))
        }
    }

    /// Links: here 7 -> 3 and 8 -> 8; in namespace 2, 9 -> 4 (the DPU's
    /// SecY on its uplink).
    fn link(ns: Option<i32>, i: u32) -> Option<u32> {
        match (ns, i) {
            (None, 7) => Some(3),
            (None, 8) => Some(8),
            (Some(2), 9) => Some(4),
            _ => None,
        }
    }

    #[test]
    fn a_ports_wire() {
        let unknown = |p: &PortState| match wire_of(p, link) {
            Wire::Unknown(why) => why,
            w => panic!("{w:?}"),
        };
        assert_eq!(
            wire_of(&port(7, "none", Some("self")), link),
            Wire::At(None, 3)
        );
        // A MACsec netdev is never its own link: that would be no link.
        unknown(&port(8, "none", Some("self")));
        unknown(&port(9, "none", Some("self")));
        assert_eq!(
            wire_of(&port(5, "none", Some("upper")), link),
            Wire::At(None, 5)
        );
        assert_eq!(wire_of(&port(5, "none", None), link), Wire::At(None, 5));
        // A bound port's wire is its SecY's real device, in the SecY's
        // namespace, or here.
        assert_eq!(
            wire_of(&bound(5, Some(9), Some(2)), link),
            Wire::At(Some(2), 4)
        );
        assert_eq!(wire_of(&bound(5, Some(7), None), link), Wire::At(None, 3));
        assert!(unknown(&bound(5, Some(9), Some(3))).contains("nsid 3"));
        unknown(&bound(5, Some(9), None));
        assert!(unknown(&bound(5, None, None)).contains("stale"));
    }

    #[test]
    fn report_joins_ports_with_their_wires() {
        let dev = |name: &str, nsid, ifindex, ingress, egress| Audited {
            name: name.to_string(),
            nsid,
            ifindex,
            ingress,
            egress,
        };
        let devices = vec![
            dev(
                "va",
                None,
                3,
                counts(&[(MACSEC_ENC, 4)]),
                counts(&[(MACSEC_ENC, 6)]),
            ),
            dev("eni0", None, 4, Counts::default(), counts(&[(ROCE, 2)])),
            dev(
                "dpu:up0",
                Some(2),
                4,
                Counts::default(),
                counts(&[(MACSEC_ROCE, 1)]),
            ),
        ];
        let ports = vec![
            port(7, "none", Some("self")),
            port(9, "offload-mac", Some("self")),
            port(4, "none", Some("upper")),
            port(11, "none", None),
            bound(12, None, None),
            bound(13, Some(9), Some(2)),
        ];
        let link = |ns: Option<i32>, i: u32| match (ns, i) {
            (None, 7) => Some(3),
            (None, 9) => Some(4),
            (Some(2), 9) => Some(4),
            _ => None,
        };
        let r = report(&devices, &ports, link);
        assert_eq!(r.devices.len(), 3);
        assert_eq!(r.devices[0].egress["macsec-encrypted"], 6);
        assert_eq!(r.devices[0].verdict, Some(Verdict::Verified));
        assert_eq!(r.devices[1].verdict, Some(Verdict::PlaintextOnWire));
        let got: Vec<_> = r
            .ports
            .iter()
            .map(|p| (p.ifname.as_str(), p.wire.as_str(), p.verdict, p.contradicts))
            .collect();
        assert_eq!(
            got,
            [
                ("p7", "va", Verdict::Verified, false),
                ("p9", "eni0", Verdict::PlaintextOnWire, true),
                ("p4", "eni0", Verdict::PlaintextOnWire, false),
                ("p13", "dpu:up0", Verdict::IntegrityOnly, true),
            ]
        );
        let before: Vec<_> = r.ports.iter().map(|p| p.hook_before_offload).collect();
        assert_eq!(before, [false, true, false, true]);
        let un: Vec<_> = r.unaudited.iter().map(|u| u.ifname.as_str()).collect();
        assert_eq!(un, ["p11", "p12"]);
    }

    /// Reads a capture back, block by block, as a reader of the format
    /// would: (interface names, then per packet interface, timestamp,
    /// flags, original length, data).
    #[allow(clippy::type_complexity)]
    fn read_pcapng(b: &[u8]) -> (Vec<String>, Vec<(u32, u64, u32, u32, Vec<u8>)>) {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u16_at = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap()) as usize;
        let (mut names, mut pkts) = (Vec::new(), Vec::new());
        let mut o = 0;
        while o < b.len() {
            let (ty, len) = (u32_at(o), u32_at(o + 4) as usize);
            assert_eq!(len % 4, 0);
            assert_eq!(u32_at(o + len - 4) as usize, len, "trailing length");
            let opts = |mut p: usize, end: usize| {
                let mut v = Vec::new();
                while p < end {
                    let (code, l) = (u16_at(p), u16_at(p + 2));
                    if code == 0 {
                        break;
                    }
                    v.push((code, b[p + 4..p + 4 + l].to_vec()));
                    p += 4 + pad4(l);
                }
                v
            };
            match ty {
                0x0A0D_0D0A => assert_eq!(u32_at(o + 8), 0x1A2B_3C4D),
                1 => {
                    assert_eq!(u16_at(o + 8), 1, "LINKTYPE_ETHERNET");
                    let o2 = opts(o + 16, o + len - 4);
                    assert!(o2.contains(&(9, vec![9])), "nanosecond resolution");
                    let name = o2.iter().find(|(c, _)| *c == 2).unwrap();
                    names.push(String::from_utf8(name.1.clone()).unwrap());
                }
                6 => {
                    let cap = u32_at(o + 20) as usize;
                    let ts = (u64::from(u32_at(o + 12)) << 32) | u64::from(u32_at(o + 16));
                    let o2 = opts(o + 28 + pad4(cap), o + len - 4);
                    let flags = o2.iter().find(|(c, _)| *c == 2).unwrap();
                    let flags = u32::from_le_bytes(flags.1.clone().try_into().unwrap());
                    pkts.push((
                        u32_at(o + 8),
                        ts,
                        flags,
                        u32_at(o + 24),
                        b[o + 28..o + 28 + cap].to_vec(),
                    ));
                }
                t => panic!("block type {t:#x}"),
            }
            o += len;
        }
        (names, pkts)
    }

    #[test]
    fn a_report_gives_each_ports_verdict() {
        let devices = vec![Audited {
            name: "eni0".to_string(),
            ifindex: 4,
            egress: counts(&[(ROCE, 2)]),
            ..Default::default()
        }];
        let ports = vec![port(4, "none", Some("upper")), port(5, "none", None)];
        let r = report(&devices, &ports, |_, _| None);
        let text = serde_json::to_string(&r).unwrap();
        let v = port_verdicts(&text).unwrap();
        assert_eq!(
            v.into_iter().collect::<Vec<_>>(),
            [("p4".to_string(), Verdict::PlaintextOnWire)]
        );
        assert!(port_verdicts("{}").is_err());
        assert!(port_verdicts(r#"{"ports": [{"ifname": "a", "verdict": "fine"}]}"#).is_err());
    }

    #[test]
    fn pcapng_reads_back() {
        let names = vec!["va".to_string(), "a-longer-name".to_string()];
        let mut w = Pcapng::new(Vec::new(), &names).unwrap();
        let f1: Vec<u8> = (0..61).collect();
        let f2: Vec<u8> = (0..64).collect();
        w.packet(1, 0x1_2345_6789, Dir::Egress, 1500, &f1).unwrap();
        w.packet(0, 7, Dir::Ingress, 64, &f2).unwrap();
        w.packet(0, 8, Dir::Egress, 0, &[]).unwrap();
        let (n, p) = read_pcapng(&w.finish().unwrap());
        assert_eq!(n, names);
        assert_eq!(
            p,
            [
                (1, 0x1_2345_6789, 2, 1500, f1),
                (0, 7, 1, 64, f2),
                (0, 8, 2, 0, vec![]),
            ]
        );
    }

    #[test]
    fn samples_parse_and_bad_ones_do_not() {
        let mut s = vec![0u8; SAMPLE_HEADER + SNAPLEN];
        s[0..8].copy_from_slice(&42u64.to_ne_bytes());
        s[8..12].copy_from_slice(&1000u32.to_ne_bytes());
        s[12..16].copy_from_slice(&3u32.to_ne_bytes());
        s[16] = 1;
        s[17] = MACSEC_ENC as u8;
        s[SAMPLE_HEADER..SAMPLE_HEADER + 3].copy_from_slice(b"abc");
        assert_eq!(
            parse_sample(&s),
            Some((42, 1000, Dir::Egress, MACSEC_ENC as u8, &b"abc"[..]))
        );
        let mut bad = s.clone();
        bad[12..16].copy_from_slice(&(SNAPLEN as u32 + 1).to_ne_bytes());
        assert_eq!(parse_sample(&bad), None);
        let mut bad = s.clone();
        bad[16] = 2;
        assert_eq!(parse_sample(&bad), None);
        let mut bad = s.clone();
        bad[17] = 6;
        assert_eq!(parse_sample(&bad), None);
        assert_eq!(parse_sample(&s[..s.len() - 1]), None);
    }
}
