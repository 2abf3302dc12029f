//! The parameter check of `build`: every part's parameters, refused when out of range with the
//! parameter named, in one fixed order (the first bad one a configuration has is the one named).

use super::super::ecn::RedMarker;
use super::{ingress, Fabric, Params};

/// Refuses out-of-range parameters naming the parameter (`build` runs it before binding).
pub fn check(p: &Params) -> Result<(), String> {
    if p.ports == 0 || p.ports > 64 {
        return Err(format!("ports = {}: must be in 1..=64", p.ports));
    }
    if p.latency > 1_000_000 {
        return Err(format!("latency = {}: must be in 0..=1000000 ns", p.latency));
    }
    if p.port_buffer == 0 || p.port_buffer > 1 << 36 {
        return Err(format!("port_buffer = {}: must be in 1..=2^36 bytes", p.port_buffer));
    }
    let (buf_name, buf) = match p.fabric {
        Fabric::Voq => ("buffer", p.buffer),
        Fabric::OutputQueued => ("port_buffer", p.port_buffer),
    };
    let frac = |x: f64| x > 0.0 && x <= 1.0;
    if !frac(p.pfc_threshold) || !frac(p.pfc_xon_threshold) || p.pfc_xon_threshold > p.pfc_threshold {
        return Err(format!(
            "pfc: fractions of port_buffer must satisfy 0 < pfc_xon_threshold ({}) ≤ pfc_threshold ({}) ≤ 1",
            p.pfc_xon_threshold, p.pfc_threshold
        ));
    }
    let (xoff, xon) = (p.xoff_bytes(), p.xon_bytes());
    if p.pfc && (xon > xoff || xoff >= buf) {
        return Err(format!(
            "pfc: thresholds must satisfy XON ({xon} B) ≤ XOFF ({xoff} B) < {buf_name} ({buf}) (pfc_xon / pfc_xon_threshold, pfc_xoff / pfc_threshold × port_buffer)"
        ));
    }
    if p.pfc_priorities.is_empty() || p.pfc_priorities.len() > 8 {
        return Err(format!(
            "pfc_priorities = {:?}: give the lossless priorities, 1 to 8 of 0..=7",
            p.pfc_priorities
        ));
    }
    for (i, &q) in p.pfc_priorities.iter().enumerate() {
        if q > 7 || p.pfc_priorities[..i].contains(&q) {
            return Err(format!(
                "pfc_priorities = {:?}: {q} is {}",
                p.pfc_priorities,
                if q > 7 { "not in 0..=7" } else { "named twice" }
            ));
        }
    }
    if p.pfc_watchdog > 1_000_000_000 {
        return Err(format!(
            "pfc_watchdog = {}: must be in 0..=1000000000 ns",
            p.pfc_watchdog
        ));
    }
    if p.crossbar_latency > 1_000_000 {
        return Err(format!(
            "crossbar_latency = {}: must be in 0..=1000000 ns",
            p.crossbar_latency
        ));
    }
    if p.cut_through_latency > 1_000_000 {
        return Err(format!(
            "cut_through_latency = {}: must be in 0..=1000000 ns",
            p.cut_through_latency
        ));
    }
    // The lookup tables and the classification: the ingress node's own check.
    ingress::check(&ingress::Params::of(p))?;
    RedMarker::new(p.ecn_kmin, p.ecn_kmax, 1)?;
    for (name, w) in [("wrr_req", p.wrr_req), ("wrr_rsp", p.wrr_rsp)] {
        if !(1..=65535).contains(&w) {
            return Err(format!("{name} = {w}: must be in 1..=65535"));
        }
    }
    if p.fabric == Fabric::Voq {
        if p.buffer == 0 || p.buffer > 1 << 36 {
            return Err(format!("buffer = {}: must be in 1..=2^36 bytes", p.buffer));
        }
        if !(1.0 / 64.0..=64.0).contains(&p.dt_alpha) {
            return Err(format!("dt_alpha = {}: must be in 1/64..=64", p.dt_alpha));
        }
        let n = p.ports as usize;
        if p.reserve.saturating_mul((n * n) as u64) > p.buffer {
            return Err(format!(
                "reserve = {}: the {} queues' reserves exceed the buffer of {} bytes",
                p.reserve,
                n * n,
                p.buffer
            ));
        }
    }
    Ok(())
}
