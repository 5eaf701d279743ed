// SPDX-License-Identifier: GPL-2.0

//! The lockstep state machine: what a port may advertise, given what is
//! known of the SecY that protects it.
//!
//! Plain Rust with no kernel dependency, so that it can be tested apart
//! from the kernel, against a reference model of `macsec.c`.
//!
//! The contract (`Documentation/networking/macsec_bridge.rst`):
//!
//! - *Safety*: a port never advertises more protection than the SecY gives.
//!   Before an operation is forwarded to the driver, the port advertises the
//!   weaker of the state before and the state the operation leads to
//!   ([`Port::before`]); a teardown is thus retracted before it happens, and
//!   a setup is advertised only once it succeeded ([`Port::after`]). An
//!   operation that may take the driver's protection down partway
//!   ([`Op::disturbs`]) leads, while it runs, to a state whose driver is not
//!   settled; after any failure, and until an operation hands the driver
//!   the whole SecY ([`Op::settles`]), the SecY stays so ([`learn`]).
//! - *Liveness*: after every operation or observed event the advertised
//!   state equals the evaluation of what is known.
//! - Every change of the advertised state bumps the generation by one.
//!
//! Layer 1 (types and leaves). Owns: what is known of a SecY
//! ([`Knowledge`]), the operations ([`Op`]) and each port's state machine
//! ([`Port`]). May use: nothing of the driver.

/// How strongly a port's egress is protected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Protection {
    /// Not protected (or not known to be).
    None,
    /// MACsec in software (`macsec.c` encrypts). Part of the uAPI but never
    /// reported: a software SecY emits no event when its SAs,
    /// `protect_frames` or `encrypt` change, so the module cannot keep such
    /// a claim true (see [`evaluate`]).
    Software,
    /// MACsec offloaded to the PHY.
    OffloadPhy,
    /// MACsec offloaded to the MAC.
    OffloadMac,
}

impl Protection {
    /// Strength, for "never advertise more": none < software < offload.
    pub fn rank(self) -> u8 {
        match self {
            Protection::None => 0,
            Protection::Software => 1,
            Protection::OffloadPhy | Protection::OffloadMac => 2,
        }
    }

    /// Whether this is hardware offload (`NETIF_F_HW_MACSEC` is then set on
    /// the port).
    pub fn is_offload(self) -> bool {
        self.rank() == 2
    }
}

/// Why a port is not offload-protected: exactly one, the first that applies
/// in this order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reason {
    /// The module has not observed the SecY since it loaded (or since the
    /// port appeared): it claims nothing.
    Unknown,
    /// A DPU binding points at a SecY that is gone.
    BindingStale,
    /// No SecY protects the port.
    NoSecy,
    /// The MACsec netdev is down.
    SecyDown,
    /// The lower device is down or has no carrier.
    LowerDown,
    /// The encoding TX SA is missing or inactive.
    NoActiveTxSa,
    /// `protect_frames` is off: frames leave unprotected.
    ProtectOff,
    /// `encrypt` is off: integrity only, no confidentiality.
    EncryptOff,
    /// The SecY is not offloaded (it may protect in software; that cannot
    /// be observed).
    OffloadOff,
    /// The SecY is offloaded, but `macsec.c` can no longer reach its
    /// offloading driver: the real device lost `NETIF_F_HW_MACSEC` (or its
    /// `macsec_ops`), or, for PHY offload, its PHY. Every operation on it
    /// now fails before the driver, and the driver may have dropped what it
    /// held: once the device can be reached again, the SecY is
    /// [`Reason::Unsettled`] until an operation settles it. Also where the
    /// module cannot follow the offloader: on a kernel without the MACsec
    /// core's offload notifier, for a SecY offloaded to a MAC whose PHY
    /// could take it unseen.
    OffloadUnreachable,
    /// The SecY, as `macsec.c` holds it, would be offload-protected, but
    /// what the driver holds is not known: an operation that may take its
    /// protection down partway is in flight, or one failed, or the module
    /// has not seen the driver handed the whole SecY since it loaded (see
    /// [`Op::settles`]). Checked after every other reason of the SecY.
    Unsettled,
    /// The SecY protects only part of the port's egress: the port is the
    /// SecY's real device (`upper`), whose own RoCE GIDs, its default GID
    /// always among them, leave unprotected. Checked last: it applies only
    /// where the SecY itself would be offload-protected.
    Partial,
}

/// Where the SecY's crypto runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Offload {
    /// Software.
    Off,
    /// The PHY.
    Phy,
    /// The MAC.
    Mac,
}

/// Number of association numbers (`MACSEC_NUM_AN`).
pub const NUM_AN: usize = 4;

/// A snapshot of the SecY and the devices around it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SecyState {
    /// Offload mode.
    pub offload: Offload,
    /// The MACsec netdev is up.
    pub secy_up: bool,
    /// The lower device is up with carrier.
    pub lower_up: bool,
    /// `protect_frames`.
    pub protect: bool,
    /// `tx_sc.encrypt`.
    pub encrypt: bool,
    /// `tx_sc.encoding_sa`.
    pub encoding_sa: u8,
    /// TX SAs: `None` absent, `Some(active)` present.
    pub tx_sa: [Option<bool>; NUM_AN],
    /// What the driver holds may differ from the rest of this state: see
    /// [`Reason::Unsettled`]. Not the SecY's to say: the module learns it
    /// from the operations it sees ([`learn`]).
    pub unsettled: bool,
    /// The TX SAs (bit `an`) whose record in the driver may differ from
    /// `macsec.c`'s: an operation on the SA failed (mlx5e's
    /// `mdo_upd_txsa` writes its record of `active` before it can fail,
    /// and its `mdo_upd_secy` rebuilds the TX rules from those records), or
    /// the module first saw the SecY with the driver's records unknown.
    /// Learnt as [`SecyState::unsettled`] is.
    pub doubt: u8,
    /// `macsec.c` can reach the offloading driver: for MAC offload, the
    /// real device has `NETIF_F_HW_MACSEC` and `macsec_ops`
    /// (`macsec_check_offload()`). Not the SecY's to say either: read from
    /// the real device ([`reach`]).
    pub reachable: bool,
}

/// Every association number in doubt ([`SecyState::doubt`]).
pub const ALL_IN_DOUBT: u8 = (1 << NUM_AN) - 1;

/// The bit of association number `an` in [`SecyState::doubt`] (none for an
/// out-of-range number).
fn an_bit(an: u8) -> u8 {
    if usize::from(an) < NUM_AN {
        1 << an
    } else {
        0
    }
}

impl SecyState {
    /// Whether the encoding SA exists and is active.
    pub fn encoding_sa_active(&self) -> bool {
        self.tx_sa.get(self.encoding_sa as usize).copied().flatten() == Some(true)
    }
}

/// What the module knows about the SecY of a port.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Knowledge {
    /// Not observed yet.
    Unknown,
    /// A binding whose SecY went away.
    Stale,
    /// There is no SecY.
    NoSecy,
    /// Observed.
    Known(SecyState),
}

/// How much of the port's egress its SecY carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// All of it: the port is the MACsec netdev, or bound to a SecY.
    Whole,
    /// Only traffic on the SecY's own addresses (`upper`).
    Partial,
}

/// What a port advertises.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Verdict {
    /// The protection.
    pub protection: Protection,
    /// Why it is not offload, or `None` when it is.
    pub reason: Option<Reason>,
}

impl Verdict {
    const fn none(reason: Reason) -> Verdict {
        Verdict {
            protection: Protection::None,
            reason: Some(reason),
        }
    }
}

/// The verdict for what is known, for a port whose egress the SecY carries
/// in `scope`: a partial scope never claims protection.
pub fn judge(k: &Knowledge, scope: Scope) -> Verdict {
    let v = evaluate(k);
    match scope {
        Scope::Partial if v.protection != Protection::None => Verdict::none(Reason::Partial),
        _ => v,
    }
}

/// The verdict for what is known of the SecY alone.
pub fn evaluate(k: &Knowledge) -> Verdict {
    let s = match k {
        Knowledge::Unknown => return Verdict::none(Reason::Unknown),
        Knowledge::Stale => return Verdict::none(Reason::BindingStale),
        Knowledge::NoSecy => return Verdict::none(Reason::NoSecy),
        Knowledge::Known(s) => s,
    };
    if !s.secy_up {
        return Verdict::none(Reason::SecyDown);
    }
    if !s.lower_up {
        return Verdict::none(Reason::LowerDown);
    }
    // A software SecY calls no `mdo_*`: its SAs, protect_frames and encrypt
    // change unseen, so nothing beyond the netdev states can be vouched for.
    if s.offload == Offload::Off {
        return Verdict::none(Reason::OffloadOff);
    }
    if !s.reachable {
        return Verdict::none(Reason::OffloadUnreachable);
    }
    let failing = [
        (!s.encoding_sa_active(), Reason::NoActiveTxSa),
        (!s.protect, Reason::ProtectOff),
        (!s.encrypt, Reason::EncryptOff),
    ];
    if let Some((_, reason)) = failing.iter().find(|(fails, _)| *fails) {
        return Verdict::none(*reason);
    }
    if s.unsettled {
        return Verdict::none(Reason::Unsettled);
    }
    match s.offload {
        Offload::Off => Verdict::none(Reason::OffloadOff),
        Offload::Phy => Verdict {
            protection: Protection::OffloadPhy,
            reason: None,
        },
        Offload::Mac => Verdict {
            protection: Protection::OffloadMac,
            reason: None,
        },
    }
}

/// An offload operation, with what it carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    /// `mdo_dev_open`.
    DevOpen,
    /// `mdo_dev_stop`.
    DevStop,
    /// `mdo_add_secy`: the SecY becomes offloaded; the snapshot carries the
    /// new mode (`ctx->offload`).
    AddSecy,
    /// `mdo_upd_secy`: `macsec.c` already changed the SecY.
    UpdSecy,
    /// `mdo_del_secy`: the SecY is no longer offloaded (it may live on in
    /// software, or be about to be deleted).
    DelSecy,
    /// `mdo_add_txsa`: the SA is published only after the call.
    AddTxsa {
        /// Association number.
        an: u8,
        /// Whether the new SA is active.
        active: bool,
    },
    /// `mdo_upd_txsa`: `macsec.c` already changed the SA.
    UpdTxsa {
        /// Association number.
        an: u8,
        /// Whether the SA is active now.
        active: bool,
    },
    /// `mdo_del_txsa`: the SA is unpublished only after the call.
    DelTxsa {
        /// Association number.
        an: u8,
    },
    /// Any RX SC/SA operation: changes nothing on egress, but re-observes
    /// the SecY.
    Other,
}

impl Op {
    /// Whether `macsec.c` completes the change even when the driver fails
    /// the operation: it stops a SecY whatever `mdo_dev_stop` returns, and
    /// deletes one whatever `mdo_del_secy` returns. What the driver then
    /// holds is unknown, so the port must not return to what it advertised
    /// before the call.
    ///
    /// `mdo_del_secy` also turns offload off, and there a failure keeps the
    /// SecY offloaded; the operation cannot tell the two apart. The port
    /// then shows the SecY as not offloaded until an operation on it
    /// succeeds (every one shows the whole SecY), and
    /// unsettled (the failure left the driver so, see [`learn`]) until one
    /// [`Op::settles`] it: it claims less than is true, never more.
    pub fn done_even_if_failed(self) -> bool {
        matches!(self, Op::DevStop | Op::DelSecy)
    }

    /// Whether the driver may take the SecY's egress protection down
    /// partway through this operation, even where `macsec.c`'s own change
    /// (see [`predict`]) takes nothing away: mlx5e's `mdo_upd_secy`
    /// deletes the steering rule of every TX SA, then re-creates the
    /// encoding SA's, and fails between if that fails (even for a change of
    /// nothing, `ip link set macsec0 type macsec encrypt on`); an update or
    /// deletion of the encoding SA (`at_call`'s) rewrites or removes its
    /// rule. The port claims nothing while such an operation runs.
    pub fn disturbs(self, at_call: &SecyState) -> bool {
        match self {
            Op::UpdSecy => true,
            Op::UpdTxsa { an, .. } | Op::DelTxsa { an } => an == at_call.encoding_sa,
            _ => false,
        }
    }

    /// Whether a success hands the driver the whole SecY, or takes all of
    /// it away, so that what the driver holds is known again: `add_secy`
    /// (a new offload) and `del_secy` (nothing left) always; `upd_secy`
    /// (mlx5e deletes every TX rule and re-creates the encoding SA's from
    /// its own record of that SA) when that record is not in doubt (see
    /// [`learn`]). Not `dev_open`: aquantia's, with no carrier, programs
    /// nothing and returns 0 (it programs at link up, unseen). Other
    /// operations touch one SA, or nothing, and leave what the driver
    /// holds as unsettled as it was.
    pub fn settles(self) -> bool {
        matches!(self, Op::AddSecy | Op::UpdSecy | Op::DelSecy)
    }
}

/// The state an operation leads to if it succeeds, from the SecY as the
/// operation sees it at call time (`ctx->secy`).
///
/// `macsec.c` updates the SecY before `mdo_upd_*` and publishes or
/// unpublishes SAs only after `mdo_add_txsa`/`mdo_del_txsa`; this is where
/// that asymmetry lives.
pub fn predict(at_call: SecyState, op: Op) -> SecyState {
    let mut s = at_call;
    match op {
        Op::DevOpen => s.secy_up = true,
        Op::DevStop => s.secy_up = false,
        Op::DelSecy => s.offload = Offload::Off,
        Op::AddTxsa { an, active } | Op::UpdTxsa { an, active } => {
            if let Some(sa) = s.tx_sa.get_mut(an as usize) {
                *sa = Some(active);
            }
        }
        Op::DelTxsa { an } => {
            if let Some(sa) = s.tx_sa.get_mut(an as usize) {
                *sa = None;
            }
        }
        Op::AddSecy | Op::UpdSecy | Op::Other => {}
    }
    s
}

/// Where operation `op` leads while it runs, from the SecY as the driver
/// sees it at call time: [`predict`], and unsettled if it may take the
/// driver's protection down partway ([`Op::disturbs`]).
pub fn in_flight(at_call: SecyState, op: Op) -> SecyState {
    let mut s = predict(at_call, op);
    s.unsettled |= op.disturbs(&at_call);
    s
}

/// What is known of a SecY once operation `op` returned: `was` before it,
/// `seen` the SecY as the operation shows it on return (`ctx->secy`, where
/// `macsec.c` has not yet undone a change the driver refused).
///
/// The driver holds what it was handed only if the operation succeeded: a
/// failure of an operation on egress leaves the driver unsettled, and a
/// failure of one on a TX SA leaves the driver's record of that SA in
/// doubt ([`SecyState::doubt`]). A record leaves doubt only when the driver
/// makes it afresh: the SA added (after its deletion), or the whole SecY
/// added or deleted; an update does not (mlx5e's `mdo_upd_txsa` returns 0
/// without touching its rule when its record already says what it is
/// asked). The driver is settled again by an operation that
/// [`Op::settles`] it, `upd_secy` only while the encoding SA's record is
/// not in doubt. A SecY first seen now (`was` not known, or known as not
/// offloaded while `op` is no `add_secy`: offload came on unseen) is
/// unsettled with every record in doubt: the module did not see what the
/// driver was handed before. On failure the SecY is as `macsec.c` restores
/// it, which is `was`, except where `macsec.c` goes on regardless
/// ([`Op::done_even_if_failed`]); a SecY not known before stays so then
/// (`seen` holds the change that failed), and is unsettled once known.
/// An operation seen while the module may not vouch for the offloader
/// (`seen.reachable` false: see [`SecyState::reachable`]) leaves the SecY
/// unsettled too, as losing the reach does ([`reach`]): once it is back,
/// only an operation that settles the driver says what it holds.
pub fn learn(was: Knowledge, seen: SecyState, op: Op, ok: bool) -> Knowledge {
    // An RX operation changes nothing on egress: its failure teaches
    // nothing.
    if op == Op::Other && !ok {
        return was;
    }
    let (unsettled, mut doubt) = match was {
        Knowledge::Known(s) if s.offload != Offload::Off || op == Op::AddSecy => {
            (s.unsettled, s.doubt)
        }
        _ => (true, ALL_IN_DOUBT),
    };
    let mut s = match (ok || op.done_even_if_failed(), was) {
        (true, _) => predict(seen, op),
        (false, Knowledge::Known(s)) => s,
        (false, other) => return other,
    };
    match op {
        Op::AddTxsa { an, .. } | Op::DelTxsa { an } if ok => doubt &= !an_bit(an),
        Op::AddTxsa { an, .. } | Op::UpdTxsa { an, .. } | Op::DelTxsa { an } if !ok => {
            doubt |= an_bit(an)
        }
        Op::AddSecy | Op::DelSecy if ok => doubt = 0,
        _ => {}
    }
    let settles = op.settles() && (op != Op::UpdSecy || doubt & an_bit(s.encoding_sa) == 0);
    s.unsettled = !ok || !s.reachable || (unsettled && !settles);
    s.doubt = doubt;
    Knowledge::Known(s)
}

/// What is known of SecY `s` once whether `macsec.c` reaches its driver
/// was read again from the real device (`reachable`). Losing the reach
/// (the device lost `NETIF_F_HW_MACSEC`) also unsettles the SecY: the
/// driver may have dropped what it held (mlx5e leaves MACsec for
/// switchdev mode), and only an operation that settles it says what it
/// holds once the device can be reached again.
pub fn reach(s: SecyState, reachable: bool) -> SecyState {
    match (s.reachable, reachable) {
        (true, false) => SecyState {
            reachable: false,
            unsettled: true,
            ..s
        },
        (false, true) => SecyState {
            reachable: true,
            ..s
        },
        _ => s,
    }
}

/// The advertised state of one port.
#[derive(Clone, Debug)]
pub struct Port {
    known: Knowledge,
    scope: Scope,
    /// Where the operation in flight leads, between [`Port::before`] and
    /// [`Port::after`]: until it is over, nothing observed may lift the
    /// port above it.
    pending: Option<Knowledge>,
    advertised: Verdict,
    generation: u64,
}

impl Port {
    /// A port with what is known of it at creation, whose egress the SecY
    /// carries whole until [`Port::observe_in`] says otherwise.
    pub fn new(known: Knowledge) -> Port {
        Port {
            known,
            scope: Scope::Whole,
            pending: None,
            advertised: evaluate(&known),
            generation: 1,
        }
    }

    /// What the port advertises.
    pub fn advertised(&self) -> Verdict {
        self.advertised
    }

    /// What is known of the SecY.
    pub fn known(&self) -> Knowledge {
        self.known
    }

    /// How much of the port's egress its SecY carries.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Where the operation in flight leads, if one is.
    pub fn pending(&self) -> Option<Knowledge> {
        self.pending
    }

    /// Bumped on every change of the advertised state.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn advertise(&mut self, v: Verdict) -> bool {
        if v == self.advertised {
            return false;
        }
        self.advertised = v;
        self.generation += 1;
        true
    }

    /// Before an operation whose success leads to `next` is forwarded:
    /// advertise no more than both now and `next` allow, until
    /// [`Port::after`]. Returns whether the advertised state changed.
    pub fn before(&mut self, next: &Knowledge) -> bool {
        self.pending = Some(*next);
        self.settle()
    }

    /// After the operation: the SecY is `known` (see [`learn`]).
    /// Converges on it.
    pub fn after(&mut self, known: Knowledge) -> bool {
        self.pending = None;
        self.known = known;
        self.settle()
    }

    /// A change observed after the fact (a netdevice event, which runs in
    /// the same RTNL section as the change). While an operation is in
    /// flight, the port stays at or below where it leads.
    pub fn observe(&mut self, known: Knowledge) -> bool {
        self.known = known;
        self.settle()
    }

    /// As [`Port::observe`], with the port now related to its SecY such that
    /// the SecY carries `scope` of the port's egress.
    pub fn observe_in(&mut self, known: Knowledge, scope: Scope) -> bool {
        self.scope = scope;
        self.observe(known)
    }

    /// What the SecY gives the traffic it carries: for a port it carries
    /// whole, what the port advertises; for a partial one, what RoCE on the
    /// SecY's own addresses gets. As [`Port::advertised`], no more than the
    /// operation in flight leads to.
    pub fn carried(&self) -> Verdict {
        self.target_in(Scope::Whole)
    }

    /// What the port may advertise: what is known, and no more than the
    /// operation in flight leads to.
    fn target(&self) -> Verdict {
        self.target_in(self.scope)
    }

    fn target_in(&self, scope: Scope) -> Verdict {
        let now = judge(&self.known, scope);
        match &self.pending {
            Some(next) => {
                let then = judge(next, scope);
                if then.protection.rank() < now.protection.rank() {
                    then
                } else {
                    now
                }
            }
            None => now,
        }
    }

    fn settle(&mut self) -> bool {
        self.advertise(self.target())
    }
}
