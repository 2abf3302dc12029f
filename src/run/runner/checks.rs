//! The checks of a run: `expect:` validated against the built netlist before the run, and
//! evaluated on the kernel's counters, nets' histories and metrics after it; the flows' results
//! and the run-wide metrics they read.

use hwsim_hw::{Cycle, Shape, Sim};

use crate::build::check_policy::{bounds_text, within_bounds};
use crate::build::testbench::{Elaborated, Loaded};
use crate::input::schema::{Bound, Expect};
use crate::input::yaml::{self, InputError, Value};

use super::{CheckResult, FlowReport};

/// Flow results from the PAXI counters of each flow's source chip (sender side: from the
/// transaction's issue to its last frame's ACK).
pub(super) fn flows(sim: &Sim, el: &Elaborated) -> Vec<FlowReport> {
    let Some(info) = &el.system else { return Vec::new() };
    info.flows
        .iter()
        .map(|f| {
            let c = |n: &str| {
                sim.counter(&format!("chip{}.paxi.flow{}_{n}", f.src, f.local))
                    .unwrap_or(0)
            };
            let (bytes, first, last, txns) = (c("bytes"), c("first"), c("last"), c("txns"));
            let (first, last) = (first.saturating_sub(1), last.saturating_sub(1));
            let span = last.saturating_sub(first);
            FlowReport {
                name: f.name.clone(),
                bytes,
                first_byte: first,
                last_byte: last,
                goodput: if span > 0 { bytes as f64 / span as f64 } else { 0.0 },
                latency_mean: if txns > 0 {
                    c("lat_sum") as f64 / txns as f64
                } else {
                    0.0
                },
                latency_max: c("lat_max"),
                latency_p50: c("lat_p50"),
                latency_p99: c("lat_p99"),
                latency_p999: c("lat_p999"),
            }
        })
        .collect()
}

/// Aggregate goodput over all flows: bytes / (last completion − first issue).
fn aggregate_goodput(flows: &[FlowReport]) -> f64 {
    let bytes = flows.iter().map(|f| f.bytes).fold(0, u64::saturating_add);
    let first = flows
        .iter()
        .filter(|f| f.bytes > 0)
        .map(|f| f.first_byte)
        .min()
        .unwrap_or(0);
    let last = flows.iter().map(|f| f.last_byte).max().unwrap_or(0);
    if last > first {
        bytes as f64 / (last - first) as f64
    } else {
        0.0
    }
}

/// The sum of the counters `glob` matches, saturating (the byte counters of a thousand chips
/// under a huge --max-memory could pass 2^64 - 1; a wrapped sum would fake the scoreboard).
fn sum(sim: &Sim, glob: &str) -> u64 {
    sim.counters()
        .filter(|(n, _)| hwsim_hw::glob_match(glob, n))
        .map(|(_, v)| v)
        .fold(0, u64::saturating_add)
}

/// Checks every `expect:` entry against the elaborated simulation (names, forms, bounds).
pub fn validate_checks(l: &Loaded, sim: &Sim) -> Result<(), InputError> {
    crate::build::check_policy::validate(l)?;
    for (i, e) in l.tb.expect.iter().enumerate() {
        // Errors point at this expect's own field, not the first expect naming the same thing.
        let key = ["port", "counter", "metric"]
            .into_iter()
            .zip([&e.port, &e.counter, &e.metric])
            .find_map(|(k, v)| v.is_some().then_some(k))
            .unwrap_or("expect");
        let at = |field: &str, msg: String| l.item_error("expect", i, field, msg);
        let what = [e.port.is_some(), e.counter.is_some(), e.metric.is_some()]
            .iter()
            .filter(|&&b| b)
            .count();
        let label = e
            .port
            .clone()
            .or(e.counter.clone())
            .or(e.metric.clone())
            .unwrap_or_else(|| "expect".into());
        if what != 1 {
            return Err(at(
                key,
                "each expect names exactly one of `port`, `counter`, `metric`".into(),
            ));
        }
        if e.port.is_some() {
            let forms = [e.value.is_some(), e.count.is_some(), e.sequence.is_some()]
                .iter()
                .filter(|&&b| b)
                .count();
            if forms != 1 {
                return Err(at(
                    key,
                    format!("expect on `{label}`: give exactly one of `value`, `count`, `sequence`"),
                ));
            }
            if e.value.is_some() && e.at.is_none() && e.within.is_none() {
                return Err(at(
                    "value",
                    format!("expect on `{label}`: `value` needs `at` or `within`"),
                ));
            }
            if let Some([a, b]) = e.within {
                if a > b {
                    return Err(at("within", format!("expect on `{label}`: within [{a}, {b}] is empty")));
                }
            }
        } else {
            if e.equals.is_none() && e.min.is_none() && e.max.is_none() {
                return Err(at(key, format!("expect on `{label}`: give `equals`, `min` or `max`")));
            }
            if let (Some(lo), Some(hi)) = (e.min.as_ref().and_then(Bound::num), e.max.as_ref().and_then(Bound::num)) {
                if lo > hi {
                    return Err(at(
                        "min",
                        format!("expect on `{label}`: min {lo} > max {hi} can never hold"),
                    ));
                }
            }
            if let Some(r) = &e.reduce {
                if e.counter.is_none() || !["sum", "max", "min"].contains(&r.as_str()) {
                    return Err(at(
                        "reduce",
                        format!("reduce: `{r}` needs a counter and is one of sum, max, min"),
                    ));
                }
            }
            if let Some(c) = &e.counter {
                if !sim.counters().any(|(n, _)| hwsim_hw::glob_match(c, n)) {
                    let known: Vec<&str> = sim.counters().map(|(n, _)| n).take(12).collect();
                    return Err(at(
                        "counter",
                        format!(
                            "no counter matches `{c}` (counters: {}{})",
                            known.join(", "),
                            if sim.counters().count() > 12 { ", …" } else { "" }
                        ),
                    ));
                }
            }
            if let Some(m) = &e.metric {
                // Only results, never the kernel's own work (activations, executed cycles): those
                // differ between skip and --no-skip by design, and a verdict must not.
                if !METRICS.contains(&m.as_str()) {
                    return Err(at(
                        "metric",
                        format!(
                            "unknown metric `{m}` ({}; activations and executed cycles are in --stats)",
                            METRICS.join(", ")
                        ),
                    ));
                }
                let flow_metric = ["goodput", "latency_max", "latency_mean"].contains(&m.as_str());
                if flow_metric && l.tb.system.is_none() {
                    return Err(at(
                        "metric",
                        format!("metric `{m}` needs a system-form testbench (flows)"),
                    ));
                }
                if metric_value(m, sim, 0, &[]).is_none() && !flow_metric {
                    return Err(at(
                        "metric",
                        format!("metric `{m}` needs a switch (voq_switch) in the testbench"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Metrics a check can bound: `end_cycle`; for system form `goodput` (aggregate bytes/ns over
/// the flows), `latency_max` and `latency_mean` (ns, over every transaction); with a switch
/// (`voq_switch`) `throughput` (measured cells delivered per output per slot, 0–1, after its
/// `warmup`; the mean over switches), `mean_delay` and `p99_delay` (cycles from arrival at the
/// input to crossing the crossbar; p99 the worst switch's) and `drops` (cells); with a
/// `cell_source` `offered` (cells generated per input per slot, the mean over sources), and with
/// both `saturated`: 1 when the switch accepts less than [`SATURATED_BELOW`] of the load offered
/// (BookSim2's saturation: the accepted rate falls short of the offered), else 0.
pub(super) const METRICS: &[&str] = &[
    "end_cycle",
    "goodput",
    "latency_max",
    "latency_mean",
    "throughput",
    "mean_delay",
    "p99_delay",
    "drops",
    "offered",
    "saturated",
];

/// A point is saturated when its throughput is below this share of its offered load: a
/// stationary switch below saturation delivers what is offered, within the sampling noise of a
/// run (a percent or so over the study runs' 10^4–10^5 slots).
pub const SATURATED_BELOW: f64 = 0.95;

/// A metric's unit (the plot axes print it).
pub fn metric_unit(m: &str) -> Option<&'static str> {
    Some(match m {
        // One vocabulary: a duration in ns (a cycle, or a cell slot, is 1 ns), a moment in "cycle".
        "end_cycle" => "cycle",
        "mean_delay" | "p99_delay" => "ns",
        "goodput" => "bytes/ns",
        "latency_max" | "latency_mean" => "ns",
        "throughput" => "cells per output per slot",
        "offered" => "cells per input per slot",
        "saturated" => "flag",
        "drops" => "cells",
        _ => return None,
    })
}

/// A metric's value, or `None` when the run has nothing it measures (no flows, no switch).
pub(super) fn metric_value(m: &str, sim: &Sim, end: Cycle, flows: &[FlowReport]) -> Option<f64> {
    let switches = sim.counters().filter(|(n, _)| n.ends_with(".throughput_ppm")).count();
    Some(match m {
        "end_cycle" => end as f64,
        "goodput" if !flows.is_empty() => aggregate_goodput(flows),
        "latency_max" if !flows.is_empty() => flows.iter().map(|f| f.latency_max).max().unwrap_or(0) as f64,
        "latency_mean" if !flows.is_empty() => {
            // The flows' sums: every transaction of a system run belongs to a flow, and the
            // flows leave out the warm-up (`metrics_from`).
            let txns: u64 = sum(sim, "*.paxi.flow*_txns");
            if txns > 0 {
                sum(sim, "*.paxi.flow*_lat_sum") as f64 / txns as f64
            } else {
                0.0
            }
        }
        "throughput" if switches > 0 => throughput(sim, switches),
        "mean_delay" if switches > 0 => {
            let n = sum(sim, "*.delivered");
            if n > 0 {
                sum(sim, "*.delay_sum") as f64 / n as f64
            } else {
                0.0
            }
        }
        "p99_delay" if switches > 0 => sim
            .counters()
            .filter(|(n, _)| n.ends_with(".delay_p99"))
            .map(|(_, v)| v)
            .max()
            .unwrap_or(0) as f64,
        "drops" if switches > 0 => sum(sim, "*.drops") as f64,
        "offered" if sources(sim) > 0 => offered(sim),
        "saturated" if switches > 0 && sources(sim) > 0 => {
            f64::from(u8::from(throughput(sim, switches) < SATURATED_BELOW * offered(sim)))
        }
        _ => return None,
    })
}

/// The switches' measured throughput: cells per output per slot, the mean over `switches`.
fn throughput(sim: &Sim, switches: usize) -> f64 {
    sum(sim, "*.throughput_ppm") as f64 / 1e6 / switches as f64
}

/// The cell sources of the run (their `offered_ppm` counters).
fn sources(sim: &Sim) -> usize {
    sim.counters().filter(|(n, _)| n.ends_with(".offered_ppm")).count()
}

/// The load the cell sources offered: cells per input per slot, the mean over sources.
fn offered(sim: &Sim) -> f64 {
    sum(sim, "*.offered_ppm") as f64 / 1e6 / sources(sim).max(1) as f64
}

/// Evaluates one check against the finished simulation.
pub(super) fn evaluate(e: &Expect, sim: &Sim, el: &Elaborated, end: Cycle, flows: &[FlowReport]) -> CheckResult {
    if let Some(c) = &e.counter {
        return counter_check(e, c, sim);
    }
    if let Some(m) = &e.metric {
        return metric_check(e, m, sim, end, flows);
    }
    let ep = e.port.as_deref().expect("validated");
    let w = &el.watches[ep];
    let ops = &el.values[&w.type_id];
    let net = sim.net(ep).expect("watched endpoint has a net");
    if let (Some(n), false, None, None) = (e.count, w.log, e.at, e.within) {
        // Every push of the run, counted by the stream itself (no history was kept).
        let got = net.pushes().unwrap_or(0);
        return CheckResult {
            first_difference: None,
            name: e.name.clone().unwrap_or_else(|| format!("{ep} pushes == {n}")),
            passed: got == n,
            expected: n.to_string(),
            actual: got.to_string(),
        };
    }
    let (lo, hi) = match (e.at, e.within) {
        (Some(a), _) => (a, a),
        (None, Some([a, b])) => (a, b),
        (None, None) => (0, Cycle::MAX),
    };
    let window = if (lo, hi) == (0, Cycle::MAX) {
        String::new()
    } else if lo == hi {
        format!(" @ {lo}")
    } else {
        format!(" in [{lo}, {hi}]")
    };
    // Values present in the window: for a signal its value at `lo` and every change after (a
    // value check), or its changes in the window (a count, a sequence); for a stream each push.
    // Only what the check shows or compares is made a YAML value (values::Query).
    let at_lo = w.shape == Shape::Signal && e.count.is_none() && e.sequence.is_none();
    let want_value = e.value.as_ref().filter(|_| e.count.is_none() && e.sequence.is_none());
    let accept = |v: &Value| want_value.is_some_and(|want| yaml::matches(want, v));
    let q = crate::build::values::Query {
        lo,
        hi,
        at_lo,
        take: match (&e.sequence, e.count) {
            (_, Some(_)) => 0,
            // The sequence, one more (to show an extra), and the 24 the report shows.
            (Some(seq), None) => (seq.len() + 1).max(24),
            (None, None) => 8,
        },
        want: want_value.is_some().then_some(&accept as &dyn Fn(&Value) -> bool),
    };
    let seen = ops
        .history(net.as_ref(), w.shape, &q)
        .unwrap_or_else(|| crate::build::values::Seen {
            items: if at_lo { vec![(lo, Value::Null)] } else { Vec::new() },
            count: usize::from(at_lo),
            ..Default::default()
        });
    let kind = if w.shape == Shape::Stream { "pushes" } else { "changes" };
    if let Some(n) = e.count {
        return CheckResult {
            first_difference: None,
            name: e.name.clone().unwrap_or_else(|| format!("{ep} {kind}{window} == {n}")),
            passed: seen.count as u64 == n,
            expected: n.to_string(),
            actual: seen.count.to_string(),
        };
    }
    if let Some(seq) = &e.sequence {
        return sequence_check(e, ep, &window, seq, &seen);
    }
    let want = e.value.as_ref().expect("validated");
    let hit = seen.hit.as_ref();
    let actual = match hit {
        Some((c, v)) => format!("{} @ {c}", yaml::show(v)),
        None if seen.count == 0 => {
            // Say what was nearest, to help.
            match &seen.nearest {
                Some((c, v)) => format!("nothing{window}; nearest {} @ {c}", yaml::show(v)),
                None => format!("nothing ever ({kind}: 0)"),
            }
        }
        None => seen
            .items
            .iter()
            .take(8)
            .map(|(c, v)| format!("{} @ {c}", yaml::show(v)))
            .collect::<Vec<_>>()
            .join(", "),
    };
    CheckResult {
        first_difference: None,
        name: e
            .name
            .clone()
            .unwrap_or_else(|| format!("{ep}{window} == {}", yaml::show(want))),
        passed: hit.is_some(),
        expected: yaml::show(want),
        actual,
    }
}

/// A counter check: the counters `c` matches, summed (or their max or min), within bounds.
fn counter_check(e: &Expect, c: &str, sim: &Sim) -> CheckResult {
    let vals = sim
        .counters()
        .filter(|(n, _)| hwsim_hw::glob_match(c, n))
        .map(|(_, v)| v);
    let (x, how) = match e.reduce.as_deref() {
        Some("max") => (vals.max().unwrap_or(0), "max of "),
        Some("min") => (vals.min().unwrap_or(0), "min of "),
        _ => (vals.fold(0, u64::saturating_add), ""),
    };
    CheckResult {
        first_difference: None,
        name: e.name.clone().unwrap_or_else(|| format!("{how}{c} {}", bounds_text(e))),
        passed: within_bounds(e, x as f64),
        expected: bounds_text(e),
        actual: x.to_string(),
    }
}

/// A metric check: the run's figure within bounds (a metric the run lacks reads 0).
fn metric_check(e: &Expect, m: &str, sim: &Sim, end: Cycle, flows: &[FlowReport]) -> CheckResult {
    // A metric the run does not have reads 0 (a switch metric on a chip-only run).
    let x = metric_value(m, sim, end, flows).unwrap_or(0.0);
    CheckResult {
        first_difference: None,
        name: e.name.clone().unwrap_or_else(|| format!("{m} {}", bounds_text(e))),
        passed: within_bounds(e, x),
        expected: bounds_text(e),
        actual: if x.fract() == 0.0 && x.abs() < 1e16 {
            format!("{x}")
        } else if (1e-4..1e16).contains(&x.abs()) {
            format!("{x:.3}")
        } else {
            crate::input::schema::exact(x)
        },
    }
}

/// A sequence check: the values in the window, in order, match the expected list exactly; the
/// first difference says where they part.
fn sequence_check(e: &Expect, ep: &str, window: &str, seq: &[Value], seen: &crate::build::values::Seen) -> CheckResult {
    let items = &seen.items;
    let passed = seq.len() == seen.count && seq.iter().zip(items).all(|(x, (_, y))| yaml::matches(x, y));
    let differ = seq.iter().zip(items).position(|(x, (_, y))| !yaml::matches(x, y));
    let first_difference = match differ {
        _ if passed => None,
        Some(i) => Some(format!(
            "item {i}: expected {}, actual {} @ {}",
            yaml::show(&seq[i]),
            yaml::show(&items[i].1),
            items[i].0
        )),
        None if seen.count > seq.len() => Some(format!(
            "{} more than expected from item {}: {} @ {}",
            seen.count - seq.len(),
            seq.len(),
            yaml::show(&items[seq.len()].1),
            items[seq.len()].0
        )),
        None => Some(format!(
            "{} fewer than expected: item {} ({}) never came",
            seq.len() - seen.count,
            seen.count,
            yaml::show(&seq[seen.count])
        )),
    };
    let shown: Vec<String> = items
        .iter()
        .take(24)
        .map(|(c, v)| format!("{}@{c}", yaml::show(v)))
        .collect();
    CheckResult {
        first_difference,
        name: e.name.clone().unwrap_or_else(|| format!("{ep} sequence{window}")),
        passed,
        expected: format!("[{}]", seq.iter().map(yaml::show).collect::<Vec<_>>().join(", ")),
        actual: format!("[{}{}]", shown.join(", "), if seen.count > 24 { ", …" } else { "" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_say_time_as_the_counters_do() {
        // A duration in ns, a moment in `cycle` (docs/testbenches.md).
        for m in METRICS {
            let u = metric_unit(m).unwrap_or("");
            assert!(!["cycles", "clocks"].contains(&u), "metric {m}: unit `{u}`");
        }
        assert_eq!(metric_unit("end_cycle"), Some("cycle"));
        assert_eq!(metric_unit("mean_delay"), Some("ns"));
    }
}
