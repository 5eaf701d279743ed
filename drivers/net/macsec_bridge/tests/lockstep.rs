// SPDX-License-Identifier: GPL-2.0

//! Host tests of the lockstep state machine: the state table, and random
//! event sequences checked against a reference model of `macsec.c`.

use macsec_bridge_lockstep::*;
use proptest::prelude::*;

fn offloaded() -> SecyState {
    SecyState {
        offload: Offload::Mac,
        secy_up: true,
        lower_up: true,
        protect: true,
        encrypt: true,
        encoding_sa: 0,
        tx_sa: [Some(true), None, None, None],
        unsettled: false,
        doubt: 0,
        reachable: true,
    }
}

/// A key change, as MKA makes it: TX SA 1 added active, then made the
/// encoding SA (`upd_secy`). What is known after each, from `known` of
/// the SecY `s` (whose encoding SA is 0).
fn rotate(known: Knowledge, s: SecyState) -> Knowledge {
    let add = Op::AddTxsa {
        an: 1,
        active: true,
    };
    let known = learn(known, s, add, true);
    let Knowledge::Known(now) = known else {
        panic!("{known:?}")
    };
    learn(
        known,
        SecyState {
            encoding_sa: 1,
            ..now
        },
        Op::UpdSecy,
        true,
    )
}

fn verdict(k: Knowledge) -> (Protection, Option<Reason>) {
    let v = evaluate(&k);
    (v.protection, v.reason)
}

#[test]
fn state_table() {
    use Protection as P;
    let s = offloaded();
    let k = Knowledge::Known;
    assert_eq!(verdict(k(s)), (P::OffloadMac, None));
    assert_eq!(
        verdict(k(SecyState {
            offload: Offload::Phy,
            ..s
        })),
        (P::OffloadPhy, None)
    );
    assert_eq!(
        verdict(k(SecyState {
            offload: Offload::Off,
            ..s
        })),
        (P::None, Some(Reason::OffloadOff))
    );
    // In software mode only the netdev states are observable.
    let sw = SecyState {
        offload: Offload::Off,
        tx_sa: [None; NUM_AN],
        protect: false,
        ..s
    };
    assert_eq!(verdict(k(sw)), (P::None, Some(Reason::OffloadOff)));
    assert_eq!(
        verdict(k(SecyState {
            secy_up: false,
            ..sw
        })),
        (P::None, Some(Reason::SecyDown))
    );
    assert_eq!(
        verdict(k(SecyState {
            lower_up: false,
            ..sw
        })),
        (P::None, Some(Reason::LowerDown))
    );
    assert_eq!(
        verdict(k(SecyState {
            secy_up: false,
            ..s
        })),
        (P::None, Some(Reason::SecyDown))
    );
    assert_eq!(
        verdict(k(SecyState {
            lower_up: false,
            ..s
        })),
        (P::None, Some(Reason::LowerDown))
    );
    assert_eq!(
        verdict(k(SecyState {
            tx_sa: [Some(false), None, None, None],
            ..s
        })),
        (P::None, Some(Reason::NoActiveTxSa))
    );
    assert_eq!(
        verdict(k(SecyState {
            encoding_sa: 1,
            ..s
        })),
        (P::None, Some(Reason::NoActiveTxSa))
    );
    assert_eq!(
        verdict(k(SecyState {
            protect: false,
            ..s
        })),
        (P::None, Some(Reason::ProtectOff))
    );
    assert_eq!(
        verdict(k(SecyState {
            encrypt: false,
            ..s
        })),
        (P::None, Some(Reason::EncryptOff))
    );
    // An unsettled driver: checked after every other reason of the SecY.
    let unsettled = SecyState {
        unsettled: true,
        ..s
    };
    assert_eq!(verdict(k(unsettled)), (P::None, Some(Reason::Unsettled)));
    assert_eq!(
        verdict(k(SecyState {
            encrypt: false,
            ..unsettled
        })),
        (P::None, Some(Reason::EncryptOff))
    );
    assert_eq!(
        verdict(k(SecyState {
            offload: Offload::Off,
            ..unsettled
        })),
        (P::None, Some(Reason::OffloadOff))
    );
    // A driver macsec.c cannot reach: right after offload-off, before the
    // SAs and flags (which macsec.c can no longer change) and unsettled.
    let cut = SecyState {
        reachable: false,
        ..unsettled
    };
    assert_eq!(verdict(k(cut)), (P::None, Some(Reason::OffloadUnreachable)));
    assert_eq!(
        verdict(k(SecyState {
            encrypt: false,
            tx_sa: [None; NUM_AN],
            ..cut
        })),
        (P::None, Some(Reason::OffloadUnreachable))
    );
    assert_eq!(
        verdict(k(SecyState {
            lower_up: false,
            ..cut
        })),
        (P::None, Some(Reason::LowerDown))
    );
    assert_eq!(
        verdict(k(SecyState {
            offload: Offload::Off,
            ..cut
        })),
        (P::None, Some(Reason::OffloadOff))
    );
    assert_eq!(verdict(Knowledge::NoSecy), (P::None, Some(Reason::NoSecy)));
    assert_eq!(
        verdict(Knowledge::Unknown),
        (P::None, Some(Reason::Unknown))
    );
    assert_eq!(
        verdict(Knowledge::Stale),
        (P::None, Some(Reason::BindingStale))
    );
    // Only the first failing reason is reported.
    assert_eq!(
        verdict(k(SecyState {
            secy_up: false,
            encrypt: false,
            ..s
        })),
        (P::None, Some(Reason::SecyDown))
    );
}

#[test]
fn a_lost_reach_stays_unsettled_until_settled() {
    use Protection as P;
    let s = offloaded();
    // The real device lost NETIF_F_HW_MACSEC: retracted at once.
    let cut = reach(s, false);
    assert_eq!(
        verdict(Knowledge::Known(cut)),
        (P::None, Some(Reason::OffloadUnreachable))
    );
    // Back: the driver may have dropped its rules meanwhile.
    let back = reach(cut, true);
    assert_eq!(
        verdict(Knowledge::Known(back)),
        (P::None, Some(Reason::Unsettled))
    );
    // An SA operation settles nothing; an update hands the driver the
    // whole SecY.
    let sa = Op::AddTxsa {
        an: 1,
        active: true,
    };
    let k = learn(Knowledge::Known(back), back, sa, true);
    assert_eq!(verdict(k), (P::None, Some(Reason::Unsettled)));
    let Knowledge::Known(now) = k else {
        panic!("{k:?}")
    };
    let k = learn(k, now, Op::UpdSecy, true);
    assert_eq!(verdict(k), (P::OffloadMac, None));
    // A reach that did not change changes nothing.
    assert_eq!(reach(s, true), s);
    assert_eq!(reach(cut, false), cut);
}

#[test]
fn predict_follows_macsec_c() {
    let s = offloaded();
    let none = SecyState {
        tx_sa: [None; NUM_AN],
        ..s
    };
    // mdo_add_txsa runs before the SA is published.
    assert_eq!(
        predict(
            none,
            Op::AddTxsa {
                an: 0,
                active: true
            }
        ),
        s
    );
    // mdo_del_txsa runs before it is unpublished.
    assert_eq!(predict(s, Op::DelTxsa { an: 0 }), none);
    assert!(!predict(s, Op::DevStop).secy_up);
    assert_eq!(predict(s, Op::DelSecy).offload, Offload::Off);
    // Upd ops see the SecY already changed.
    assert_eq!(predict(s, Op::UpdSecy), s);
    // Out-of-range AN changes nothing.
    assert_eq!(predict(s, Op::DelTxsa { an: 9 }), s);
}

#[test]
fn teardown_retracts_before_setup_advertises_after() {
    let s = offloaded();
    let mut p = Port::new(Knowledge::Known(s));
    let g = p.generation();
    // Deactivating the encoding SA: retracted before the driver sees it.
    let next = Knowledge::Known(predict(
        s,
        Op::UpdTxsa {
            an: 0,
            active: false,
        },
    ));
    assert!(p.before(&next));
    assert_eq!(p.advertised().protection, Protection::None);
    assert_eq!(p.generation(), g + 1);
    assert!(!p.after(next));
    assert_eq!(p.generation(), g + 1);
    // Reactivating: nothing before, advertised after success only.
    let next = Knowledge::Known(s);
    assert!(!p.before(&next));
    assert_eq!(p.advertised().protection, Protection::None);
    assert!(p.after(next));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
    assert_eq!(p.generation(), g + 2);
}

#[test]
fn a_failed_teardown_leaves_the_driver_unsettled() {
    // macsec.c keeps the SA when the driver refuses to delete it, but the
    // driver may have removed its rule first: the port stays retracted.
    let s = offloaded();
    let op = Op::DelTxsa { an: 0 };
    assert!(!op.done_even_if_failed());
    let was = Knowledge::Known(s);
    let mut p = Port::new(was);
    assert!(p.before(&Knowledge::Known(in_flight(s, op))));
    assert_eq!(p.advertised().reason, Some(Reason::NoActiveTxSa));
    // The SecY as the failed call shows it: the SA still published, the
    // driver's record of it in doubt.
    let known = learn(was, s, op, false);
    assert_eq!(
        known,
        Knowledge::Known(SecyState {
            unsettled: true,
            doubt: 0b1,
            ..s
        })
    );
    assert!(p.after(known));
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    assert_eq!(p.generation(), 3);
    // An update of the SA, or of the SecY while SA 0 encodes, settles
    // nothing: mlx5e rebuilds its rule from the record in doubt.
    let upd = Op::UpdTxsa {
        an: 0,
        active: true,
    };
    let known = learn(known, s, upd, true);
    assert!(!p.after(known));
    let known = learn(known, s, Op::UpdSecy, true);
    assert!(!p.after(known));
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    // A key change to a new SA does: its record is made afresh.
    assert!(p.after(rotate(known, s)));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
    assert_eq!(p.generation(), 4);
}

#[test]
fn a_record_in_doubt_stays_so_until_made_afresh() {
    // mlx5e's upd_txsa writes its record of `active`, then fails (its rule
    // already gone): macsec.c keeps the SA active, the record says
    // inactive, and an update of the SecY re-creates no rule for it.
    let s = offloaded();
    let deact = Op::UpdTxsa {
        an: 0,
        active: false,
    };
    let known = learn(Knowledge::Known(s), s, deact, false);
    let known = learn(known, s, Op::UpdSecy, true);
    assert_eq!(evaluate(&known).reason, Some(Reason::Unsettled));
    // Deleted and added again: made afresh, then settled by an update.
    let gone = learn(known, s, Op::DelTxsa { an: 0 }, true);
    let Knowledge::Known(none) = gone else {
        panic!("{gone:?}")
    };
    assert_eq!(none.doubt, 0);
    let add = Op::AddTxsa {
        an: 0,
        active: true,
    };
    let back = learn(gone, none, add, true);
    assert_eq!(evaluate(&back).reason, Some(Reason::Unsettled));
    let settled = learn(back, s, Op::UpdSecy, true);
    assert_eq!(evaluate(&settled).protection, Protection::OffloadMac);
    // `dev_open` settles nothing (aquantia's programs nothing without
    // carrier); `add_secy` and `del_secy` clear every doubt.
    let failed = learn(Knowledge::Known(s), s, Op::DevStop, false);
    assert_eq!(
        evaluate(&learn(failed, s, Op::DevOpen, true)).reason,
        Some(Reason::Unsettled)
    );
    for op in [Op::AddSecy, Op::DelSecy] {
        let Knowledge::Known(k) = learn(known, s, op, true) else {
            panic!("{op:?}")
        };
        assert_eq!((k.unsettled, k.doubt), (false, 0), "{op:?}");
    }
}

#[test]
fn failed_stop_or_deletion_stays_retracted() {
    // macsec.c stops and deletes a SecY whatever the driver returns.
    for op in [Op::DevStop, Op::DelSecy] {
        assert!(op.done_even_if_failed());
        let s = offloaded();
        let mut p = Port::new(Knowledge::Known(s));
        assert!(p.before(&Knowledge::Known(in_flight(s, op))));
        let known = learn(Knowledge::Known(s), s, op, false);
        let Knowledge::Known(k) = known else {
            panic!("{op:?}: {known:?}")
        };
        assert_eq!(
            k,
            SecyState {
                unsettled: true,
                ..predict(s, op)
            }
        );
        assert!(!p.after(known), "{op:?}");
        assert_eq!(p.advertised().protection, Protection::None, "{op:?}");
        assert_eq!(p.generation(), 2, "{op:?}");
    }
}

#[test]
fn disturbing_operations_retract_while_they_run() {
    let s = offloaded();
    // A change of nothing (`encrypt on` again): mlx5e still deletes every
    // TX rule and re-creates the encoding SA's.
    let mut p = Port::new(Knowledge::Known(s));
    assert_eq!(predict(s, Op::UpdSecy), s);
    assert!(Op::UpdSecy.settles() && !Op::DevOpen.settles());
    assert!(p.before(&Knowledge::Known(in_flight(s, Op::UpdSecy))));
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    assert!(p.after(learn(Knowledge::Known(s), s, Op::UpdSecy, true)));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
    // Failing between: never restored.
    assert!(p.before(&Knowledge::Known(in_flight(s, Op::UpdSecy))));
    assert!(!p.after(learn(Knowledge::Known(s), s, Op::UpdSecy, false)));
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    assert_eq!(p.generation(), 4);
    // Which operations disturb: `upd_secy`, and an update or deletion of
    // the encoding SA; none other.
    let upd = |an| Op::UpdTxsa { an, active: true };
    assert!(upd(0).disturbs(&s) && Op::DelTxsa { an: 0 }.disturbs(&s));
    assert!(!upd(1).disturbs(&s) && !Op::DelTxsa { an: 1 }.disturbs(&s));
    for op in [
        Op::DevOpen,
        Op::DevStop,
        Op::AddSecy,
        Op::DelSecy,
        Op::AddTxsa {
            an: 0,
            active: true,
        },
        Op::Other,
    ] {
        assert!(!op.disturbs(&s), "{op:?}");
    }
    // A port already retracted for a reason of its own keeps that reason.
    let off = SecyState {
        encrypt: false,
        ..s
    };
    let mut p = Port::new(Knowledge::Known(off));
    assert!(!p.before(&Knowledge::Known(in_flight(off, Op::UpdSecy))));
    assert_eq!(p.advertised().reason, Some(Reason::EncryptOff));
}

#[test]
fn unknown_until_observed_unsettled_until_settled() {
    let mut p = Port::new(Knowledge::Unknown);
    assert_eq!(p.advertised().reason, Some(Reason::Unknown));
    // Any operation on the SecY shows all of it, but not what the driver
    // was handed before the module saw it.
    let s = offloaded();
    p.before(&Knowledge::Known(in_flight(s, Op::Other)));
    assert_eq!(p.advertised().protection, Protection::None);
    let known = learn(Knowledge::Unknown, s, Op::Other, true);
    p.after(known);
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    // A failed RX or statistics operation teaches nothing.
    assert_eq!(learn(known, s, Op::Other, false), known);
    assert_eq!(
        learn(Knowledge::Unknown, s, Op::Other, false),
        Knowledge::Unknown
    );
    // Every record is in doubt: an update of the SecY settles nothing...
    let Knowledge::Known(k) = known else {
        panic!("{known:?}")
    };
    assert_eq!((k.unsettled, k.doubt), (true, ALL_IN_DOUBT));
    for first in [known, Knowledge::Unknown] {
        let after = learn(first, s, Op::UpdSecy, true);
        assert_eq!(evaluate(&after).reason, Some(Reason::Unsettled));
    }
    // ... a key change to a fresh SA does.
    p.after(rotate(known, s));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
    // A SecY known as not offloaded whose operation comes unseen (offload
    // came on where the module could not see it) is first seen now.
    let sw = Knowledge::Known(SecyState {
        offload: Offload::Off,
        ..s
    });
    let after = learn(sw, s, Op::Other, true);
    assert_eq!(evaluate(&after).reason, Some(Reason::Unsettled));
    let Knowledge::Known(k) = learn(sw, s, Op::AddSecy, true) else {
        panic!()
    };
    assert_eq!((k.unsettled, k.doubt), (false, 0));
}

#[test]
fn partial_scope_never_claims() {
    use Protection as P;
    let s = offloaded();
    let k = Knowledge::Known;
    // Where the SecY protects, a partial scope says so by its own reason;
    // where it does not, the SecY's reason stands.
    let j = |k, scope| {
        let v = judge(&k, scope);
        (v.protection, v.reason)
    };
    assert_eq!(j(k(s), Scope::Whole), (P::OffloadMac, None));
    assert_eq!(j(k(s), Scope::Partial), (P::None, Some(Reason::Partial)));
    let phy = SecyState {
        offload: Offload::Phy,
        ..s
    };
    assert_eq!(j(k(phy), Scope::Partial), (P::None, Some(Reason::Partial)));
    let down = SecyState {
        secy_up: false,
        ..s
    };
    assert_eq!(
        j(k(down), Scope::Partial),
        (P::None, Some(Reason::SecyDown))
    );
    assert_eq!(
        j(Knowledge::NoSecy, Scope::Partial),
        (P::None, Some(Reason::NoSecy))
    );
    assert_eq!(
        j(Knowledge::Unknown, Scope::Partial),
        (P::None, Some(Reason::Unknown))
    );
}

#[test]
fn carried_is_the_secy_verdict_and_follows_the_operation_in_flight() {
    let s = offloaded();
    let mut p = Port::new(Knowledge::Unknown);
    p.observe_in(Knowledge::Known(s), Scope::Partial);
    // The port claims nothing; the traffic the SecY carries is protected.
    assert_eq!(p.advertised().protection, Protection::None);
    assert_eq!(p.carried().protection, Protection::OffloadMac);
    assert_eq!(p.carried().reason, None);
    // A teardown in flight: the carried traffic is retracted before the
    // driver runs, while the port's own verdict (none, partial) stays.
    let g = p.generation();
    let next = Knowledge::Known(predict(s, Op::DelTxsa { an: 0 }));
    assert!(!p.before(&next));
    assert_eq!(p.generation(), g);
    assert_eq!(p.carried().protection, Protection::None);
    assert_eq!(p.carried().reason, Some(Reason::NoActiveTxSa));
    // It failed: macsec.c put the SecY back, but the driver is unsettled.
    p.after(learn(Knowledge::Known(s), s, Op::DelTxsa { an: 0 }, false));
    assert_eq!(p.carried().reason, Some(Reason::Unsettled));
    // A key change settled it.
    p.after(rotate(p.known(), s));
    assert_eq!(p.carried().protection, Protection::OffloadMac);
    // A whole port carries what it advertises.
    let mut w = Port::new(Knowledge::Known(s));
    assert_eq!(w.carried(), w.advertised());
    w.before(&next);
    assert_eq!(w.carried(), w.advertised());
    assert_eq!(w.advertised().protection, Protection::None);
}

#[test]
fn scope_changes_are_one_generation_each() {
    let s = Knowledge::Known(offloaded());
    let mut p = Port::new(Knowledge::Unknown);
    // Related as upper and observed at once: one change, never offload.
    assert!(p.observe_in(s, Scope::Partial));
    assert_eq!(p.scope(), Scope::Partial);
    assert_eq!(p.advertised().reason, Some(Reason::Partial));
    assert_eq!(p.generation(), 2);
    // Operations on the SecY never lift a partial port.
    let next = Knowledge::Known(predict(offloaded(), Op::Other));
    assert!(!p.before(&next));
    assert!(!p.after(next));
    assert_eq!(p.advertised().protection, Protection::None);
    // Bound to the same SecY instead (the scope becomes whole): offload.
    assert!(p.observe_in(s, Scope::Whole));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
    assert_eq!(p.generation(), 3);
    assert!(!p.observe_in(s, Scope::Whole));
    assert_eq!(p.generation(), 3);
}

// ---- Reference model and random sequences -------------------------------

/// What the SecY really gives (0 none, 1 software, 2 offload), straight
/// from the definition: the port must never advertise more. The model's
/// `unsettled` is the worst driver's truth: once an operation on egress
/// failed, or since before the module watched, its TX rules may be gone
/// (mlx5e's after a failed `mdo_upd_secy`), until it is handed the whole
/// SecY again.
fn allowed(s: &Option<SecyState>) -> u8 {
    let Some(s) = s else { return 0 };
    let sa = s.tx_sa[s.encoding_sa as usize] == Some(true);
    let reached = s.reachable || s.offload == Offload::Off;
    let ok = s.secy_up && s.lower_up && sa && s.protect && s.encrypt && !s.unsettled && reached;
    match (ok, s.offload) {
        (false, _) => 0,
        (true, Offload::Off) => 1,
        (true, _) => 2,
    }
}

/// What the port must advertise once an event is handled: offload when the
/// SecY gives it, otherwise nothing (software protection is not observable).
fn claimable(s: &Option<SecyState>) -> u8 {
    if allowed(s) == 2 {
        2
    } else {
        0
    }
}

#[derive(Clone, Debug)]
enum Ev {
    /// An mdo_* call that succeeds or fails in the driver; with `true`
    /// last, an event arrives while it runs and re-reads the old state
    /// (the bridge's own feature change coming back as FEAT_CHANGE).
    Mdo(Op, bool, bool),
    /// `ip link set … type macsec encrypt/protect/encoding_sa` (UpdSecy).
    SetSecy {
        protect: bool,
        encrypt: bool,
        encoding_sa: u8,
        ok: bool,
    },
    /// Lower link down/up, seen by the notifier after the fact.
    Lower(bool),
    /// The lower device lost (`false`) or regained `NETIF_F_HW_MACSEC`,
    /// seen by the notifier after the fact (`NETDEV_FEAT_CHANGE`).
    Reach(bool),
    /// The SecY netdev deleted (notifier), and created again offloaded.
    Delete,
    Create,
    /// The port related to the SecY anew: as its real device (`true`:
    /// `upper`, which carries only the SecY's own GIDs) or as the SecY
    /// itself or bound to it (`false`).
    Relate(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::DevOpen),
        Just(Op::DevStop),
        Just(Op::AddSecy),
        Just(Op::DelSecy),
        (0u8..4, any::<bool>()).prop_map(|(an, active)| Op::AddTxsa { an, active }),
        (0u8..4, any::<bool>()).prop_map(|(an, active)| Op::UpdTxsa { an, active }),
        (0u8..4).prop_map(|an| Op::DelTxsa { an }),
        Just(Op::Other),
    ]
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        6 => (op(), prop::bool::weighted(0.8), any::<bool>())
            .prop_map(|(o, ok, reread)| Ev::Mdo(o, ok, reread)),
        2 => (any::<bool>(), any::<bool>(), 0u8..4, prop::bool::weighted(0.8))
            .prop_map(|(protect, encrypt, encoding_sa, ok)| Ev::SetSecy { protect, encrypt, encoding_sa, ok }),
        1 => any::<bool>().prop_map(Ev::Lower),
        1 => any::<bool>().prop_map(Ev::Reach),
        1 => Just(Ev::Delete),
        1 => Just(Ev::Create),
        1 => any::<bool>().prop_map(Ev::Relate),
    ]
}

fn run(events: Vec<Ev>) -> Result<(), TestCaseError> {
    // The real SecY, as macsec.c holds it, configured before the module
    // watched (so, for all it knows, with its driver unsettled).
    let mut real: Option<SecyState> = Some(SecyState {
        tx_sa: [None; NUM_AN],
        unsettled: true,
        doubt: ALL_IN_DOUBT,
        ..offloaded()
    });
    let mut port = Port::new(Knowledge::Unknown);
    let mut gen = port.generation();
    // The port is `upper`: the SecY carries only part of its egress, so
    // it gives the port nothing.
    let mut partial = false;
    // The lower device has `NETIF_F_HW_MACSEC`.
    let mut bit = true;
    let gives = |partial: bool, s: &Option<SecyState>| if partial { 0 } else { allowed(s) };
    for e in events {
        let before = gives(partial, &real);
        // What the SecY gives the traffic it carries, whatever the scope.
        let carried_before = allowed(&real);
        match e {
            // macsec.c finds no operations to call (`macsec_get_ops()`)
            // and fails the request before the driver: nothing changes,
            // nothing is announced. (A stop or deletion goes on without
            // the driver; the notifier shows it as `Lower` shows a link.)
            Ev::Mdo(..) | Ev::SetSecy { .. }
                if real.is_some_and(|r| r.offload != Offload::Off && !r.reachable) =>
            {
                continue
            }
            Ev::Mdo(_, ok, _) | Ev::SetSecy { ok, .. } if real.is_some() => {
                let mut r = real.unwrap();
                let op = match e {
                    Ev::Mdo(op, _, _) => op,
                    _ => Op::UpdSecy,
                };
                // macsec.c semantics: what the driver sees at call time,
                // and what holds after success.
                let (at_call, after) = match (op, &e) {
                    (
                        _,
                        Ev::SetSecy {
                            protect,
                            encrypt,
                            encoding_sa,
                            ..
                        },
                    ) => {
                        let n = SecyState {
                            protect: *protect,
                            encrypt: *encrypt,
                            encoding_sa: *encoding_sa,
                            ..r
                        };
                        (n, n)
                    }
                    (Op::UpdTxsa { an, active }, _) => {
                        let mut n = r;
                        n.tx_sa[an as usize] = Some(active);
                        (n, n)
                    }
                    (Op::AddTxsa { an, active }, _) => {
                        let mut n = r;
                        n.tx_sa[an as usize] = Some(active);
                        (r, n)
                    }
                    (Op::DelTxsa { an }, _) => {
                        let mut n = r;
                        n.tx_sa[an as usize] = None;
                        (r, n)
                    }
                    (Op::DevOpen, _) => (r, SecyState { secy_up: true, ..r }),
                    (Op::DevStop, _) => (
                        r,
                        SecyState {
                            secy_up: false,
                            ..r
                        },
                    ),
                    // The driver sees the new mode in ctx->offload.
                    (Op::AddSecy, _) => {
                        let n = SecyState {
                            offload: Offload::Mac,
                            ..r
                        };
                        (n, n)
                    }
                    (Op::DelSecy, _) => (
                        r,
                        SecyState {
                            offload: Offload::Off,
                            ..r
                        },
                    ),
                    (_, _) => (r, r),
                };
                let was = port.known();
                port.before(&Knowledge::Known(in_flight(at_call, op)));
                if let Ev::Mdo(_, _, true) = e {
                    port.observe(port.known());
                }
                // Safety: whatever the driver does, the port claims no more
                // than before and after allow.
                let adv = port.advertised().protection.rank();
                prop_assert!(adv <= before, "{op:?}: advertised {adv} > before {before}");
                // The same for the traffic the SecY carries (an upper
                // port's GIDs on the SecY).
                let car = port.carried().protection.rank();
                prop_assert!(car <= carried_before, "{op:?}: carried {car} > before");
                // mlx5e deletes every TX rule in `mdo_upd_secy` and
                // re-creates the encoding SA's; an update or deletion of
                // the encoding SA rewrites or removes its rule: while the
                // driver runs one, nothing is protected.
                let partway = match op {
                    Op::UpdSecy => true,
                    Op::UpdTxsa { an, .. } | Op::DelTxsa { an } => an == at_call.encoding_sa,
                    _ => false,
                };
                if partway {
                    prop_assert_eq!(adv, 0, "{:?}: advertised while the driver runs it", op);
                    prop_assert_eq!(car, 0, "{:?}: carried while the driver runs it", op);
                }
                // macsec.c stops the SecY whatever the driver returns.
                if ok || op == Op::DevStop {
                    prop_assert!(
                        adv <= gives(partial, &Some(after)),
                        "{op:?}: advertised {adv} > after"
                    );
                    prop_assert!(car <= allowed(&Some(after)), "{op:?}: carried > after");
                    r = after;
                }
                // The driver, at its worst: after a failure on egress
                // anything, its record of a TX SA whose operation failed
                // too, until the SA is made afresh (added) or the whole
                // SecY is (added, deleted); an update of the SecY rebuilds
                // its TX rule from the encoding SA's record. An operation
                // on a SecY that was not offloaded (offload came on
                // unseen) finds it as after the module loaded.
                if r.offload == Offload::Off && op != Op::AddSecy && op != Op::Other {
                    r.unsettled = true;
                    r.doubt = ALL_IN_DOUBT;
                }
                let bit = |an: u8| 1u8 << an;
                match (op, ok) {
                    (Op::Other, _) => {}
                    (
                        Op::AddTxsa { an, .. } | Op::UpdTxsa { an, .. } | Op::DelTxsa { an },
                        false,
                    ) => {
                        r.unsettled = true;
                        r.doubt |= bit(an);
                    }
                    // A failed `del_secy` may have dropped anything (and
                    // the module, which cannot tell it from a deletion,
                    // then knows the SecY as not offloaded).
                    (Op::DelSecy, false) => {
                        r.unsettled = true;
                        r.doubt = ALL_IN_DOUBT;
                    }
                    (_, false) => r.unsettled = true,
                    (Op::AddTxsa { an, .. } | Op::DelTxsa { an }, true) => r.doubt &= !bit(an),
                    (Op::AddSecy | Op::DelSecy, true) => {
                        r.unsettled = false;
                        r.doubt = 0;
                    }
                    (Op::UpdSecy, true) if r.doubt & bit(r.encoding_sa) == 0 => r.unsettled = false,
                    _ => {}
                }
                port.after(learn(was, at_call, op, ok));
                real = Some(r);
            }
            Ev::Mdo(..) | Ev::SetSecy { .. } => continue,
            Ev::Lower(up) => {
                if let Some(r) = real.as_mut() {
                    r.lower_up = up;
                    port.observe(Knowledge::Known(*r));
                }
            }
            Ev::Reach(on) => {
                bit = on;
                if let Some(r) = real.as_mut() {
                    if r.offload != Offload::Off && r.reachable != on {
                        r.reachable = on;
                        // The driver, at its worst, dropped all it held.
                        r.unsettled |= !on;
                    }
                }
                if let Knowledge::Known(k) = port.known() {
                    let can = on || k.offload == Offload::Off;
                    port.observe(Knowledge::Known(reach(k, can)));
                }
            }
            Ev::Relate(p) => {
                partial = p;
                let scope = if p { Scope::Partial } else { Scope::Whole };
                port.observe_in(port.known(), scope);
            }
            Ev::Delete => {
                real = None;
                port.observe(Knowledge::NoSecy);
            }
            Ev::Create => {
                // macsec.c refuses an offloaded SecY the device cannot
                // take (`macsec_check_offload()`).
                if real.is_none() && bit {
                    let r = SecyState {
                        tx_sa: [None; NUM_AN],
                        secy_up: false,
                        ..offloaded()
                    };
                    // Made with the module's `mdo_add_secy` seen: settled.
                    real = Some(r);
                    port.before(&Knowledge::Known(r));
                    port.after(Knowledge::Known(r));
                }
            }
        }
        // Liveness: once the event is handled, the port says what is true,
        // unless the SecY has not been observed yet.
        let claim = if partial { 0 } else { claimable(&real) };
        let carried = port.carried().protection.rank();
        if port.known() != Knowledge::Unknown {
            prop_assert_eq!(port.advertised().protection.rank(), claim);
            prop_assert!(port.advertised().protection.rank() <= gives(partial, &real));
            prop_assert_eq!(carried, claimable(&real));
        } else {
            prop_assert_eq!(port.advertised().protection, Protection::None);
            prop_assert_eq!(carried, 0);
        }
        if !partial {
            prop_assert_eq!(port.carried(), port.advertised());
        }
        // The generation only ever moves forward.
        prop_assert!(port.generation() >= gen);
        gen = port.generation();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_advertises_more_than_the_model(events in prop::collection::vec(ev(), 1..60)) {
        run(events)?;
    }
}

#[test]
fn nothing_observed_lifts_a_retraction_in_flight() {
    let s = offloaded();
    let mut p = Port::new(Knowledge::Known(s));
    let off = Knowledge::Known(SecyState {
        encrypt: false,
        ..s
    });
    assert!(p.before(&off));
    assert_eq!(p.advertised().protection, Protection::None);
    // An event while the operation runs (our own feature change coming
    // back as NETDEV_FEAT_CHANGE) re-reads the old state: still retracted.
    assert!(!p.observe(Knowledge::Known(s)));
    assert_eq!(p.advertised().reason, Some(Reason::EncryptOff));
    // The operation failed: macsec.c put the SecY back, the driver is
    // unsettled.
    let Knowledge::Known(at_call) = off else {
        unreachable!()
    };
    assert!(p.after(learn(Knowledge::Known(s), at_call, Op::UpdSecy, false)));
    assert_eq!(p.advertised().reason, Some(Reason::Unsettled));
    // It succeeds: retracted until it returns, then advertised again.
    assert!(!p.before(&Knowledge::Known(in_flight(s, Op::UpdSecy))));
    assert!(p.after(learn(p.known(), s, Op::UpdSecy, true)));
    assert_eq!(p.advertised().protection, Protection::OffloadMac);
}

#[test]
fn generation_counts_changes_exactly() {
    let s = offloaded();
    let mut p = Port::new(Knowledge::Known(s));
    let mut changes = 0;
    for up in [false, false, true, true, false, true] {
        if p.observe(Knowledge::Known(SecyState { lower_up: up, ..s })) {
            changes += 1;
        }
    }
    assert_eq!(changes, 4);
    assert_eq!(p.generation(), 1 + changes);
}
