//! The comparison walk of `hwsim diff`: values normalized and sampled cycle by cycle, one pair
//! compared over a range, the window after a divergence, the unmapped signals of the mapped
//! nodes, and the constant-lag hint.

use std::fmt::Write as _;

use super::Pair;
use crate::report::waves::{Val, Wave};

/// A value normalized for comparison and display.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Norm {
    /// A number (bits without leading zeros, `0` for zero), known bits only.
    Num(String),
    /// Bits with `x`/`z`, at the sampled width.
    Raw(String),
    Real(f64),
}

pub(super) fn normalize(v: &Val, slice: Option<(u32, u32)>) -> Norm {
    match v {
        Val::Real(r) => Norm::Real(*r),
        Val::Bits(b) => {
            let b = match slice {
                Some((hi, lo)) => {
                    // `b` is MSB first; bit i is at index len-1-i (missing high bits are 0).
                    let n = b.len() as i64;
                    (lo..=hi)
                        .rev()
                        .map(|i| {
                            let idx = n - 1 - i as i64;
                            if idx >= 0 {
                                b.as_bytes()[idx as usize] as char
                            } else {
                                '0'
                            }
                        })
                        .collect::<String>()
                }
                None => b.clone(),
            };
            if b.bytes().all(|c| c == b'0' || c == b'1') {
                let t = b.trim_start_matches('0');
                Norm::Num(if t.is_empty() { "0".into() } else { t.into() })
            } else {
                Norm::Raw(b.to_ascii_lowercase())
            }
        }
    }
}

impl Norm {
    pub(super) fn same(&self, o: &Norm) -> bool {
        match (self, o) {
            // A NaN is the same as a NaN (a wave holding one equals itself).
            (Norm::Real(a), Norm::Real(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Norm::Real(r), Norm::Num(n)) | (Norm::Num(n), Norm::Real(r)) => {
                u128::from_str_radix(n, 2).is_ok_and(|x| x as f64 == *r)
            }
            _ => self == o,
        }
    }
    pub(super) fn show(&self) -> String {
        match self {
            Norm::Num(b) if b.len() <= 128 => u128::from_str_radix(b, 2).map_or_else(|_| b.clone(), |x| x.to_string()),
            Norm::Num(b) | Norm::Raw(b) => format!("b{b}"),
            Norm::Real(r) => r.to_string(),
        }
    }
}

/// One variable sampled cycle by cycle (cycles must not go back), its value normalized once
/// per change.
pub(super) struct Sampler<'a> {
    changes: &'a [(u64, Val)],
    /// Time units per cycle.
    units: f64,
    slice: Option<(u32, u32)>,
    next: usize,
    cur: Option<Norm>,
}

impl<'a> Sampler<'a> {
    pub(super) fn new(changes: &'a [(u64, Val)], period: f64, ns_per_unit: f64, slice: Option<(u32, u32)>) -> Self {
        Sampler {
            changes,
            units: period / ns_per_unit,
            slice,
            next: 0,
            cur: None,
        }
    }
    /// The value at cycle `c` (none before cycle 0 or before the first change).
    pub(super) fn at(&mut self, c: i64) -> Option<&Norm> {
        if c < 0 {
            return None;
        }
        // The time of cycle c in the file's units (rounded: 10 ns at 1 ps is 10 000).
        let t = (c as f64 * self.units).round() as u64;
        let mut moved = None;
        while self.next < self.changes.len() && self.changes[self.next].0 <= t {
            moved = Some(self.next);
            self.next += 1;
        }
        if let Some(i) = moved {
            self.cur = Some(normalize(&self.changes[i].1, self.slice));
        }
        self.cur.as_ref()
    }
}

/// The cycles (minus `off`) at which the value sampled from `changes` can change: for each
/// change at time `t`, the first cycle whose sampling time (rounded, as [`Sampler`] does) reaches
/// it. `units` is time units per cycle.
pub(super) fn change_cycles(changes: &[(u64, Val)], units: f64, off: i64) -> impl Iterator<Item = i64> + '_ {
    changes.iter().map(move |&(t, _)| {
        // The first cycle whose rounded sampling time reaches t: round(c × units) ≥ t holds
        // from c = ⌈(t − ½) / units⌉, then a few steps correct the float error (a walk from
        // ⌊t / units⌋ took 5 × 10^7 steps a change when a cycle is 10^-8 time units).
        let c0 = ((t as f64 - 0.5) / units).ceil().max(0.0);
        // A change past 2^62 cycles is past any compared cycle (at most 2^32 are).
        if c0.is_nan() || c0 >= (1u64 << 62) as f64 {
            return (1i64 << 62) - off;
        }
        let mut c = c0 as i64;
        for _ in 0..4 {
            if ((c as f64 * units).round() as u64) < t {
                c += 1;
            }
        }
        for _ in 0..4 {
            if c > 0 && (((c - 1) as f64 * units).round() as u64) >= t {
                c -= 1;
            }
        }
        c - off
    })
}

/// Last cycle of `wave` sampled every `period` ns.
pub(super) fn last_cycle(wave: &Wave, period: f64) -> u64 {
    // Held below 2^62 so `end + 1` and the offsets stay in range.
    (((wave.end_time() as f64 * wave.ns_per_unit) / period).floor() as u64).min(1 << 62)
}

/// One variable's changes: (time, value).
pub(super) type ChangeList = Vec<(u64, Val)>;

/// The two waves' sampling: ns per cycle and ns per time unit, A then B.
pub(super) struct Sides {
    pub(super) pa: f64,
    pub(super) pb: f64,
    pub(super) ua: f64,
    pub(super) ub: f64,
}

/// One pair's changes: A's, B's, and A's `when` signal's if it has one.
pub(super) struct Changes<'a> {
    pub(super) a: &'a [(u64, Val)],
    pub(super) b: &'a [(u64, Val)],
    pub(super) when: Option<&'a [(u64, Val)]>,
}

/// One pair compared over `from..to` with B's cycle offset `off`.
pub(super) struct Outcome {
    /// The first divergent cycle, A's value, B's.
    pub(super) first: Option<(i64, String, String)>,
    /// Cycles that differ, cycles compared (`when` high).
    pub(super) differ: u64,
    pub(super) compared: u64,
}

pub(super) fn show(v: Option<&Norm>) -> String {
    v.map_or("-".to_string(), Norm::show)
}

pub(super) fn same_at(x: Option<&Norm>, y: Option<&Norm>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) => x.same(y),
        (None, None) => true,
        _ => false,
    }
}

/// Walks the cycles where either side (or the `when` signal) changes — not every cycle (two
/// waves ending at #4294000000 with a few changes cost a few steps, not 4 × 10^9).
pub(super) fn compare(p: &Pair, ch: &Changes<'_>, sd: &Sides, off: i64, from: i64, to: i64) -> Outcome {
    let no: &[(u64, Val)] = &[];
    let cw = ch.when.unwrap_or(no);
    let mut marks: Vec<i64> = change_cycles(ch.a, sd.pa / sd.ua, 0)
        .chain(change_cycles(ch.b, sd.pb / sd.ub, off))
        .chain(change_cycles(cw, sd.pa / sd.ua, 0))
        .filter(|&c| c > from && c < to)
        .collect();
    marks.push(from);
    marks.sort_unstable();
    marks.dedup();
    let mut xa = Sampler::new(ch.a, sd.pa, sd.ua, p.a.slice);
    let mut xb = Sampler::new(ch.b, sd.pb, sd.ub, p.b.slice);
    let mut xw = Sampler::new(cw, sd.pa, sd.ua, p.when.as_ref().and_then(|w| w.slice));
    let mut o = Outcome {
        first: None,
        differ: 0,
        compared: 0,
    };
    for (i, &c) in marks.iter().enumerate() {
        let end = marks.get(i + 1).copied().unwrap_or(to);
        let active = ch.when.is_none() || matches!(xw.at(c), Some(Norm::Num(n)) if n != "0");
        let (x, y) = (xa.at(c), xb.at(c + off));
        if !active {
            continue;
        }
        o.compared += (end - c) as u64;
        if !same_at(x, y) {
            o.differ += (end - c) as u64;
            if o.first.is_none() {
                o.first = Some((c, show(x), show(y)));
            }
        }
    }
    o
}

/// Both sides' values, as text, for the cycles `c0..c1` (sampled again).
pub(super) fn window(p: &Pair, ch: &Changes<'_>, sd: &Sides, c0: i64, c1: i64) -> Vec<(String, String)> {
    let mut xa = Sampler::new(ch.a, sd.pa, sd.ua, p.a.slice);
    let mut xb = Sampler::new(ch.b, sd.pb, sd.ub, p.b.slice);
    (c0..c1).map(|c| (show(xa.at(c)), show(xb.at(c + p.off)))).collect()
}

/// Cycles shown from the first divergence on.
pub(super) const WINDOW: i64 = 8;

/// The waves from the first divergence on: the pairs that differ, A over B, and A's other
/// signals in the mapped nodes (a node's inputs, when the wave has them under the node).
#[allow(clippy::too_many_arguments)]
pub(super) fn write_window<'a>(
    s: &mut String,
    a: &Wave,
    (pairs, differing): (&[Pair], &[bool]),
    chg: &dyn Fn(usize) -> Changes<'a>,
    sd: &Sides,
    (others, co): (&[usize], &[ChangeList]),
    c0: i64,
    to: i64,
) {
    let c1 = (c0 + WINDOW).min(to);
    let _ = writeln!(
        s,
        "window, cycles {c0}..{c1}: the signals that differ (A over B), and A's not in the map:"
    );
    let w = pairs
        .iter()
        .map(|p| p.a.label.len())
        .chain(others.iter().map(|&i| a.vars[i].name.len()))
        .max()
        .unwrap_or(0);
    for (k, p) in pairs.iter().enumerate().filter(|(k, _)| differing[*k]) {
        let rows = window(p, &chg(k), sd, c0, c1);
        let col =
            |f: &dyn Fn(&(String, String)) -> &String| rows.iter().map(|r| format!("{:>6}", f(r))).collect::<String>();
        let _ = writeln!(s, "  {:<w$} A{}", p.a.label, col(&|r| &r.0));
        let _ = writeln!(s, "  {:<w$} B{}", "", col(&|r| &r.1));
    }
    if !others.is_empty() {
        for (k, &i) in others.iter().enumerate() {
            let mut x = Sampler::new(&co[k], sd.pa, sd.ua, None);
            let row: String = (c0..c1).map(|c| format!("{:>6}", show(x.at(c)))).collect();
            let _ = writeln!(s, "  {:<w$} A only{row}", a.vars[i].name);
        }
    }
}

/// A's variables in the nodes of the mapped A signals (directly, or a field of one of their
/// streams) that no pair (or `when`) names, in file order (at most 64). A mapped signal's node is
/// its scope, or for a stream's field (`x.grant.vc` beside `x.grant.valid`) the scope above.
pub(super) fn beside(a: &Wave, pairs: &[Pair]) -> Vec<usize> {
    let scope = |n: &str| n.rsplit_once('.').map_or(String::new(), |(s, _)| s.to_string());
    let used: Vec<usize> = pairs
        .iter()
        .flat_map(|p| [Some(p.a.var), p.when.as_ref().map(|w| w.var)])
        .flatten()
        .collect();
    let node_scopes: Vec<String> = pairs
        .iter()
        .map(|p| {
            let sc = scope(&a.vars[p.a.var].name);
            // `x.grant.vc` -> node `x` when `x.grant.valid` exists (a stream), else `x.grant`.
            let up = scope(&sc);
            if !up.is_empty() && a.find(&format!("{sc}.valid")).is_some() {
                up
            } else {
                sc
            }
        })
        .collect();
    a.vars
        .iter()
        .enumerate()
        .filter(|(i, v)| {
            !used.contains(i)
                && node_scopes.iter().any(|ns| {
                    let rest = v.name.strip_prefix(ns.as_str()).and_then(|r| r.strip_prefix('.'));
                    // Directly in the node, or a field of one of its streams.
                    rest.is_some_and(|r| r.matches('.').count() <= 1)
                })
        })
        .map(|(i, _)| i)
        .take(64)
        .collect()
}

/// The smallest extra shift of B (±1 … ±4 cycles) under which every pair that compares
/// anything agrees, if there is one.
pub(super) fn constant_offset<'a>(
    pairs: &[Pair],
    chg: &dyn Fn(usize) -> Changes<'a>,
    sd: &Sides,
    from: i64,
    to: i64,
) -> Option<i64> {
    for d in [1i64, -1, 2, -2, 3, -3, 4, -4] {
        // Shrink the range so no shifted sample falls past either wave's end.
        let (f, t) = (from + d.abs(), to - d.abs());
        if t <= f {
            continue;
        }
        let mut any = false;
        let all = pairs.iter().enumerate().all(|(k, p)| {
            let o = compare(p, &chg(k), sd, p.off + d, f, t);
            any |= o.compared > 0;
            o.first.is_none()
        });
        if all && any {
            return Some(d);
        }
    }
    None
}
