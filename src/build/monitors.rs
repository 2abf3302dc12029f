//! The always-on monitors of a system run (DESIGN.md §5): every transaction completed exactly
//! once, no slot leaked, every CBFC credit home, no reordering on a lossless network, and the run
//! finished its work.
//!
//! A monitor reads counters by the block kind that declares them (its counter table, see
//! `hwsim_hw::CounterDecl`), bound once at elaboration: a counter a monitor needs that the kind
//! does not declare, or that an instance of the kind does not register, is an elaboration error
//! (exit 2). Summing by name pattern at the end, as the monitors once did, let a renamed counter
//! make "no slot leaked" pass on zero.

use hwsim_hw::Sim;

use crate::build::registry;
use crate::build::verdict::CheckResult;

/// Whether every instance of the kind registers the counter, or only some (a parameter turns
/// it on).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// Every instance; the system must have one at least.
    Every,
    /// Every instance, when the kind is in the system at all (a switch).
    EveryIfAny,
    /// Where a parameter enables it.
    Some,
}

/// One counter a monitor reads.
struct Need {
    kind: &'static str,
    name: &'static str,
    presence: Presence,
}

const fn need(kind: &'static str, name: &'static str, presence: Presence) -> Need {
    Need { kind, name, presence }
}

/// The counters the monitors read, by index ([`C`]).
#[derive(Clone, Copy)]
#[allow(non_camel_case_types)]
enum C {
    CdmaTxns,
    CdmaMulticasts,
    CdmaBytes,
    CdmaMulticastBytes,
    PaxiDone,
    PaxiDuplicate,
    PaxiFailed,
    PaxiMulTimeouts,
    PaxiMulCopyBytes,
    PaxiWdataIn,
    PaxiRdataIn,
    PaxiMulIn,
    PaxiBytesFailed,
    PaxiMulCopyFailed,
    TxMaxRetry,
    TxFatalQp,
    TxFatalAt,
    TxSlots,
    TxCredits,
    TxAckReturned,
    TxTimeouts,
    RxAckOutstanding,
    RxNaks,
    RxDups,
    SwDrops,
}

use Presence::{Every, EveryIfAny, Some as Optional};

/// Indexed by [`C`] (the array's length is the enum's: a new need cannot go unlisted).
const NEEDS: [Need; C::SwDrops as usize + 1] = [
    need("cdma", "txns", Every),
    need("cdma", "multicasts", Every),
    need("cdma", "bytes", Every),
    need("cdma", "multicast_bytes", Every),
    need("paxi", "txns_done", Every),
    need("paxi", "duplicate_done", Every),
    need("paxi", "txns_failed", Every),
    need("paxi", "mul_timeouts", Every),
    need("paxi", "mul_copy_bytes", Every),
    need("paxi", "wdata_bytes_in", Every),
    need("paxi", "rdata_bytes_in", Every),
    need("paxi", "mul_bytes_in", Every),
    need("paxi", "bytes_failed", Every),
    need("paxi", "mul_copy_bytes_failed", Every),
    need("rclink_tx", "diag_max_retry_hit", Every),
    need("rclink_tx", "fatal_qp", Every),
    need("rclink_tx", "fatal_at", Every),
    need("rclink_tx", "slots_in_use", Every),
    need("rclink_tx", "credits_outstanding", Every),
    need("rclink_tx", "ack_credits_returned", Optional),
    need("rclink_tx", "diag_timeout", Every),
    need("rclink_rx", "ack_credits_outstanding", Every),
    need("rclink_rx", "naks_sent", Every),
    need("rclink_rx", "dup_pkts", Every),
    need("l2_switch", "drops", EveryIfAny),
];

/// The monitors' counters, bound at elaboration: per need, (instance path, full counter name).
#[derive(Default)]
pub struct MonitorCounters {
    bound: Vec<Vec<(String, String)>>,
}

impl MonitorCounters {
    /// Binds every need against the instances (path, kind) and the simulation's counters; an
    /// error names the monitor's counter, the kind and the instance.
    pub fn bind(instances: &[(String, String)], sim: &Sim) -> Result<MonitorCounters, String> {
        bind_needs(&NEEDS, instances, sim)
    }

    fn at(&self, c: C) -> &[(String, String)] {
        &self.bound[c as usize]
    }

    /// The sum of a need's counters, saturating (the byte counters of a thousand chips under a
    /// huge --max-memory could pass 2^64 - 1; a wrapped sum would fake the scoreboard).
    fn sum(&self, sim: &Sim, c: C) -> u64 {
        self.at(c)
            .iter()
            .map(|(_, n)| sim.counter(n).unwrap_or(0))
            .fold(0, u64::saturating_add)
    }
}

fn bind_needs(needs: &[Need], instances: &[(String, String)], sim: &Sim) -> Result<MonitorCounters, String> {
    let blocks = registry::blocks();
    let mut bound = Vec::with_capacity(needs.len());
    for n in needs {
        let Some(kind) = registry::find(&blocks, n.kind) else {
            return Err(format!("monitor counter `{}`: no block kind `{}`", n.name, n.kind));
        };
        if kind.counter(n.name).is_none() {
            return Err(format!(
                "the system monitors read counter `{}` of block kind `{}`, which its counter table does not declare",
                n.name, n.kind
            ));
        }
        let mut v = Vec::new();
        for (path, k) in instances.iter().filter(|(_, k)| k == n.kind) {
            let full = format!("{path}.{}", n.name);
            if sim.counter(&full).is_some() {
                v.push((path.clone(), full));
            } else if n.presence != Optional {
                return Err(format!(
                    "instance `{path}` ({k}) does not register counter `{}`, which the system monitors read",
                    n.name
                ));
            }
        }
        if v.is_empty() && n.presence == Every {
            return Err(format!(
                "the system monitors read counter `{}` of block kind `{}`, and the system has no `{}`",
                n.name, n.kind, n.kind
            ));
        }
        bound.push(v);
    }
    Ok(MonitorCounters { bound })
}

/// Failures a testbench says it expects (by an `expect` on their counter), so the monitors let
/// them pass.
#[derive(Clone, Copy)]
pub struct Expected {
    /// QP fatal (`diag_max_retry_hit`).
    pub fatal: bool,
    /// Multicast timeouts (`mul_timeouts`).
    pub mul_timeout: bool,
}

/// The monitors' verdicts, in the order they are made.
struct Verdicts(Vec<CheckResult>);

impl Verdicts {
    fn check(&mut self, name: &str, passed: bool, expected: String, actual: String) {
        self.0.push(CheckResult {
            first_difference: None,
            name: format!("monitor: {name}"),
            passed,
            expected,
            actual,
        });
    }
}

/// The monitors' verdicts at the end of a system run (none for a module testbench).
/// `lossy`: the system injects faults (then NAKs and duplicates are expected).
pub fn monitors(sim: &Sim, m: &MonitorCounters, lossy: bool, quiescent: bool, expected: Expected) -> Vec<CheckResult> {
    let mut v = Verdicts(Vec::new());
    let q = if quiescent {
        "quiescent"
    } else {
        "work pending at the end"
    };
    v.check("work finished before `until`", quiescent, "quiescent".into(), q.into());
    let (issued, done, dup) = (
        m.sum(sim, C::CdmaTxns),
        m.sum(sim, C::PaxiDone),
        m.sum(sim, C::PaxiDuplicate),
    );
    let failed = m.sum(sim, C::PaxiFailed);
    v.check(
        "every transaction completed exactly once",
        issued == done.saturating_add(failed) && dup == 0,
        format!("{issued} completed (done or lost), 0 duplicates"),
        format!("{done} done + {failed} lost, {dup} duplicates"),
    );
    losses(&mut v, sim, m, expected);
    if quiescent {
        conservation(&mut v, sim, m, lossy);
    }
    scoreboard(&mut v, sim, m);
    psn_order(&mut v, sim, m, lossy);
    v.0
}

/// QP fatal events and multicast timeouts: each fails the run unless the testbench expects it.
fn losses(v: &mut Verdicts, sim: &Sim, m: &MonitorCounters, expected: Expected) {
    let expects_fatal = expected.fatal;
    // QP fatal (MAX_RETRY exceeded): the run goes on for the other QPs, and the verdict says
    // where and which transactions died. It fails the run unless the testbench expects it (an
    // `expect` on a `diag_max_retry_hit` counter).
    let value = |n: &str| sim.counter(n).unwrap_or(0);
    // fatal_qp and fatal_at are stored + 1 (0: none); bound per TX like diag_max_retry_hit.
    let fatal: Vec<String> = m
        .at(C::TxMaxRetry)
        .iter()
        .zip(m.at(C::TxFatalQp).iter().zip(m.at(C::TxFatalAt)))
        .filter(|((_, n), _)| value(n) > 0)
        .map(|((lg, _), ((_, qp), (_, at)))| {
            let (qp, at) = (value(qp).saturating_sub(1), value(at).saturating_sub(1));
            format!("{lg}: QP {qp} fatal at cycle {at}")
        })
        .collect();
    let lost_txns: Vec<String> = m
        .at(C::PaxiFailed)
        .iter()
        .filter(|(_, n)| value(n) > 0)
        .map(|(p, n)| format!("{p}: {} transaction(s) lost", value(n)))
        .collect();
    v.check(
        "QP fatal events (MAX_RETRY exceeded)",
        fatal.is_empty() || expects_fatal,
        if expects_fatal {
            "as the testbench expects".into()
        } else {
            "none".into()
        },
        if fatal.is_empty() {
            "none".into()
        } else {
            format!("{}; {}", fatal.join("; "), lost_txns.join("; "))
        },
    );
    // TYPE2 has no retransmission: a multicast burst whose group did not answer in full by the
    // multicast timeout is lost, and the run fails unless the testbench expects it.
    let timeouts: Vec<String> = m
        .at(C::PaxiMulTimeouts)
        .iter()
        .filter(|(_, n)| value(n) > 0)
        .map(|(p, n)| format!("{p}: {} multicast burst(s) timed out", value(n)))
        .collect();
    if !timeouts.is_empty() || m.sum(sim, C::CdmaMulticasts) > 0 {
        v.check(
            "multicast timeouts (a group member never answered)",
            timeouts.is_empty() || expected.mul_timeout,
            if expected.mul_timeout {
                "as the testbench expects".into()
            } else {
                "none".into()
            },
            if timeouts.is_empty() {
                "none".into()
            } else {
                timeouts.join("; ")
            },
        );
    }
}

/// At quiescence: no slot leaked, every CBFC credit home (the ACK VC's too, when lossless).
fn conservation(v: &mut Verdicts, sim: &Sim, m: &MonitorCounters, lossy: bool) {
    let slots = m.sum(sim, C::TxSlots);
    v.check(
        "no slot leaked",
        slots == 0,
        "0 slots in use".into(),
        format!("{slots}"),
    );
    let credits = m.sum(sim, C::TxCredits);
    v.check(
        "CBFC credits conserved (all home)",
        credits == 0,
        "0 outstanding".into(),
        format!("{credits}"),
    );
    // The ACK + CNP VC: every control message the RXs sent was taken in and its credit came
    // back. A control message lost to a fault takes its credit with it (finding 12), so only
    // lossless runs can be held to this. (The TXs return ACK-VC credit only when the RXs hold
    // it: `rx.ack_credits` > 0.)
    let ack = m.sum(sim, C::RxAckOutstanding);
    if !lossy && !m.at(C::TxAckReturned).is_empty() {
        v.check(
            "ACK-VC CBFC credits conserved (all home)",
            ack == 0,
            "0 outstanding".into(),
            format!("{ack}"),
        );
    }
}

/// Delivered at the AXI side: write data at the completers' slaves, read data back at the
/// requesters (PAXI counts whole frames the RX accepted in PSN order); a multicast write's
/// bytes once per group member.
fn scoreboard(v: &mut Verdicts, sim: &Sim, m: &MonitorCounters) {
    let (sent, delivered) = (
        m.sum(sim, C::CdmaBytes)
            .saturating_sub(m.sum(sim, C::CdmaMulticastBytes))
            .saturating_add(m.sum(sim, C::PaxiMulCopyBytes)),
        m.sum(sim, C::PaxiWdataIn) + m.sum(sim, C::PaxiRdataIn) + m.sum(sim, C::PaxiMulIn),
    );
    let lost = m
        .sum(sim, C::PaxiBytesFailed)
        .saturating_add(m.sum(sim, C::PaxiMulCopyFailed));
    v.check(
        "scoreboard: every byte delivered exactly once, in PSN order",
        if lost == 0 {
            sent == delivered
        } else {
            delivered <= sent && delivered.saturating_add(lost) >= sent
        },
        if lost == 0 {
            format!("{sent} bytes")
        } else {
            format!("{sent} bytes, less ≤ {lost} lost to fatal QPs")
        },
        format!("{delivered} bytes"),
    );
}

/// Without faults and switch drops nothing is lost: no NAK. Duplicates then come only from
/// retry timeouts that fired on frames still in flight (a slow queue), so they are allowed
/// exactly when a timeout fired.
fn psn_order(v: &mut Verdicts, sim: &Sim, m: &MonitorCounters, lossy: bool) {
    let drops = m.sum(sim, C::SwDrops);
    if lossy || drops != 0 {
        return;
    }
    let (naks, dups) = (m.sum(sim, C::RxNaks), m.sum(sim, C::RxDups));
    let timeouts = m.sum(sim, C::TxTimeouts);
    let (name, ok, expected) = if timeouts == 0 {
        (
            "PSN order on the wire (lossless: no NAK, no duplicate)",
            naks == 0 && dups == 0,
            "0 NAK, 0 duplicates".to_string(),
        )
    } else {
        (
            "PSN order on the wire (lossless: no NAK; duplicates only from retry timeouts)",
            naks == 0,
            format!("0 NAK ({timeouts} timeouts)"),
        )
    };
    v.check(name, ok, expected, format!("{naks} NAK, {dups} duplicates"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small system, elaborated: its instances (path, kind) and its simulation.
    fn system() -> (Vec<(String, String)>, Sim) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let l = crate::build::testbench::load(&root.join("tb/go_back_n.yaml")).unwrap();
        let (nl, _) = crate::build::system::elaborate(&l, 1).unwrap();
        let inst = nl.instance_kinds();
        (inst, nl.elaborate(1).unwrap())
    }

    #[test]
    fn every_need_binds_on_a_system_and_sums_its_instances() {
        let (inst, sim) = system();
        let m = MonitorCounters::bind(&inst, &sim).unwrap();
        // One TX per LG of each chip, each bound by path.
        let tx = inst.iter().filter(|(_, k)| k == "rclink_tx").count();
        assert!(tx > 0);
        assert_eq!(m.at(C::TxSlots).len(), tx);
        assert!(m.at(C::TxSlots).iter().all(|(p, n)| *n == format!("{p}.slots_in_use")));
        // The composite RX is bound by its own path (its children count in its scope).
        let rx = inst.iter().filter(|(_, k)| k == "rclink_rx").count();
        assert_eq!(m.at(C::RxNaks).len(), rx);
        // No switch in this system: its need binds nothing and is no error.
        assert!(m.at(C::SwDrops).is_empty());
        let issued: u64 = sim
            .counters()
            .filter(|(n, _)| n.ends_with(".cdma.txns"))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(m.sum(&sim, C::CdmaTxns), issued);
    }

    #[test]
    fn a_counter_the_kind_does_not_declare_is_refused() {
        // As if `slots_in_use` had been renamed in the TX's table.
        let (inst, sim) = system();
        let e = bind_needs(&[need("rclink_tx", "slots_used", Every)], &inst, &sim)
            .err()
            .unwrap();
        assert!(
            e.contains("`slots_used` of block kind `rclink_tx`") && e.contains("does not declare"),
            "{e}"
        );
    }

    #[test]
    fn a_declared_counter_an_instance_does_not_register_is_refused() {
        // Declared (the TX counts it per flow named in `report_flows`) but not registered
        // here, where no flow is named: a need that says every instance has it fails at the
        // first TX, by path.
        let (inst, sim) = system();
        let e = bind_needs(&[need("rclink_tx", "flow_d1_q0_state", Every)], &inst, &sim)
            .err()
            .unwrap();
        assert!(
            e.contains("instance `chip0.") && e.contains("does not register counter `flow_d1_q0_state`"),
            "{e}"
        );
        // A kind the system lacks, when the need says it must be there.
        let e = bind_needs(&[need("l2_switch", "drops", Every)], &inst, &sim)
            .err()
            .unwrap();
        assert!(e.contains("the system has no `l2_switch`"), "{e}");
        assert!(bind_needs(&[need("l2_switch", "drops", EveryIfAny)], &inst, &sim).is_ok());
    }
}
