//! `hwsim diff A B`: compares two waves (VCD or FST) cycle by cycle, the way an RTL engineer
//! checks an implementation against the model.
//!
//! Each wave is sampled once per clock cycle: cycle `c` is the value at time `c × period` (the
//! last change at or before it). A wave hwsim wrote has one cycle per nanosecond; any other wave
//! (an RTL simulator's) is sampled every `--clock-ns` (or the map's `clock_ns:`, default 1 ns).
//!
//! Without `--map`, the signals with the same full name in both waves are compared; a full name
//! declared more than once pairs its declarations in order (A's k-th with B's k-th), so a wave
//! always equals itself, and a map naming such a name is refused as ambiguous. A map (YAML) says
//! which signal of B is which of A, with bit slices and a cycle offset:
//!
//! ```yaml
//! clock_ns: 10                      # B's clock period (the command line wins)
//! signals:
//!   - {a: arb.grant.tag, b: TOP.tb.grant_tag}
//!   - {a: arb.ptr, b: "TOP.tb.dut.state[2:0]"}       # bits 2..0 of B's `state`
//!   - {a: arb.grant.valid, b: TOP.tb.grant_valid, offset: 1}   # B is one cycle later
//!   - {a: arb.grant.vc, b: TOP.tb.grant_vc, when: arb.grant.valid}  # only while A's valid is 1
//! ```
//!
//! `when:` names a signal of A; the pair is compared only in the cycles where it is non-zero. A
//! stream's fields on hwsim's waves hold the last message between pushes, while an RTL's
//! payload wires may show anything while valid is low: compare them under the stream's `valid`.
//!
//! Values are compared as unsigned numbers (widths may differ); `x`/`z` bits compare as text; a
//! NaN real is the same as a NaN.
//! The report gives, per compared signal, the first divergent cycle with both values and the few
//! cycles before it, and how many compared cycles differ (`unused` when a `when` never held);
//! the signals of A in the mapped nodes that the map leaves out; after a divergence, a window of
//! both waves from it (the signals that differ, and those unmapped ones); and a hint when one
//! constant shift of B (±1 … ±4 cycles) would make every compared signal agree. Exit 0 all equal, 1 some differ, 2 bad input
//! (a map error names file:line:col; an unreadable or truncated wave names the path, the place
//! and the reason). The wave reader's own warnings come back beside the report, for stderr.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::report::waves::Wave;

mod walk;
use crate::input::yaml::{self, InputError};
use walk::*;

/// Command-line arguments of `hwsim diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The reference wave (VCD or FST), e.g. the model's.
    pub a: PathBuf,
    /// The wave checked against it, e.g. an RTL simulator's.
    pub b: PathBuf,
    /// Which signal of B is which signal of A (YAML; default: same full names).
    #[arg(long)]
    pub map: Option<PathBuf>,
    /// Clock period of a wave not written by hwsim, ns (default: the map's, else 1).
    #[arg(long, value_name = "NS")]
    pub clock_ns: Option<f64>,
    /// First cycle compared.
    #[arg(long, value_name = "CYCLE")]
    pub from: Option<u64>,
    /// End of the compared cycles (exclusive; at most, and by default, the end of the shorter
    /// wave).
    #[arg(long, value_name = "CYCLE")]
    pub to: Option<u64>,
}

/// The map file.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct MapFile {
    /// B's clock period in ns.
    clock_ns: Option<f64>,
    /// The pairs.
    signals: Vec<MapEntry>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct MapEntry {
    /// A's signal, optionally `[hi:lo]` / `[i]`.
    a: String,
    /// B's signal, optionally sliced.
    b: String,
    /// B's cycle c + offset is compared with A's cycle c.
    #[serde(default)]
    offset: i64,
    /// A signal of A: compare only in the cycles where it is non-zero.
    when: Option<String>,
}

/// One compared pair: A's signal, B's, B's cycle offset, and A's `when` signal.
struct Pair {
    a: Sel,
    b: Sel,
    off: i64,
    when: Option<Sel>,
}

/// A signal reference: a variable and an optional bit slice `(hi, lo)`.
struct Sel {
    var: usize,
    slice: Option<(u32, u32)>,
    label: String,
}

/// Most cycles compared in one run (a bound on the time a malformed end time can cost).
const MAX_CYCLES: i64 = 1 << 32;

/// Cycles shown before the first divergence.
const CONTEXT: usize = 4;

/// Splits `name[hi:lo]` / `name[i]` into the name and the slice.
fn split_slice(s: &str) -> Option<(&str, u32, u32)> {
    let body = s.strip_suffix(']')?;
    let open = body.rfind('[')?;
    let (name, range) = (&body[..open], &body[open + 1..]);
    let (hi, lo) = match range.split_once(':') {
        Some((h, l)) => (h.trim().parse().ok()?, l.trim().parse().ok()?),
        None => {
            let i: u32 = range.trim().parse().ok()?;
            (i, i)
        }
    };
    (hi >= lo && !name.is_empty()).then_some((name, hi, lo))
}

/// Finds `spec` in `wave`: the exact name, else a name with a bit slice.
fn resolve(spec: &str, wave: &Wave) -> Result<Sel, String> {
    let once = |name: &str| -> Result<Option<usize>, String> {
        let i = wave.find(name);
        match wave.vars.iter().filter(|v| v.name == name).count() {
            0 | 1 => Ok(i),
            n => Err(format!(
                "`{name}` names {n} variables of {} (declared {n} times): a map cannot tell them apart",
                wave.path.display()
            )),
        }
    };
    if let Some(i) = once(spec)? {
        return Ok(Sel {
            var: i,
            slice: None,
            label: spec.to_string(),
        });
    }
    if let Some((name, hi, lo)) = split_slice(spec) {
        if let Some(i) = once(name)? {
            return match wave.vars[i].width {
                Some(w) if hi < w => Ok(Sel {
                    var: i,
                    slice: Some((hi, lo)),
                    label: spec.to_string(),
                }),
                Some(w) => Err(format!("`{spec}`: bit {hi} is outside `{name}` ({w} bits)")),
                None => Err(format!("`{spec}`: `{name}` is a real; it has no bits to slice")),
            };
        }
    }
    let near: Vec<&str> = {
        let leaf = spec.rsplit('.').next().unwrap_or(spec);
        let leaf = split_slice(leaf).map_or(leaf, |(n, _, _)| n);
        wave.vars
            .iter()
            .filter(|v| v.name.rsplit('.').next() == Some(leaf))
            .map(|v| v.name.as_str())
            .take(3)
            .collect()
    };
    let hint = if near.is_empty() {
        format!(
            "signals look like `{}`",
            wave.vars.first().map_or("", |v| v.name.as_str())
        )
    } else {
        format!("did you mean `{}`?", near.join("`, `"))
    };
    Err(format!("`{spec}` is not a signal of {}; {hint}", wave.path.display()))
}

/// Runs the comparison; returns the report, whether the waves agree, and one line per wave whose
/// reader printed warnings (for stderr: never part of the report). Bad input is an
/// [`InputError`].
pub fn run(args: &DiffArgs) -> Result<(String, bool, Vec<String>), InputError> {
    if let Some(c) = args.clock_ns {
        if !(c.is_finite() && c > 0.0) {
            return Err(arg_err("--clock-ns", format!("{c}: must be a period > 0 ns")));
        }
    }
    if let (Some(f), Some(t)) = (args.from, args.to) {
        if f >= t {
            return Err(arg_err(
                "--from",
                format!("{f} is not before --to {t}: no cycle to compare"),
            ));
        }
    }
    let mut a = Wave::open(&args.a)?;
    let mut b = Wave::open(&args.b)?;
    let warnings = reader_warnings(&a, &b);
    // The map: pairs and B's clock.
    let (pairs, map_clock) = match &args.map {
        Some(mp) => map_pairs(mp, &a, &b)?,
        None => (same_name_pairs(args, &a, &b)?, None),
    };
    let clock = args.clock_ns.or(map_clock).unwrap_or(1.0);
    let period = |w: &Wave| if w.is_hwsim() { 1.0 } else { clock };
    let (pa, pb) = (period(&a), period(&b));
    let (from, to) = span(args, &pairs, (&a, pa), (&b, pb))?;
    let ia: Vec<usize> = pairs.iter().map(|p| p.a.var).collect();
    let ib: Vec<usize> = pairs.iter().map(|p| p.b.var).collect();
    let iw: Vec<usize> = pairs
        .iter()
        .map(|p| p.when.as_ref().map_or(p.a.var, |w| w.var))
        .collect();
    let ca = a.changes(&ia);
    let cb = b.changes(&ib);
    let cw = a.changes(&iw);
    // What A has beside the mapped signals, under their scopes (a node's other ports: its inputs
    // when the model's wave has them), never compared: listed, and shown in the window below.
    let others = if args.map.is_some() {
        beside(&a, &pairs)
    } else {
        Vec::new()
    };
    let co = a.changes(&others);
    let sides = Sides {
        pa,
        pb,
        ua: a.ns_per_unit,
        ub: b.ns_per_unit,
    };
    let chg = |k: usize| Changes {
        a: &ca[k],
        b: &cb[k],
        when: pairs[k].when.as_ref().map(|_| cw[k].as_slice()),
    };

    let mut s = String::new();
    let _ = writeln!(
        s,
        "hwsim diff: {} (A, {pa} ns/cycle) vs {} (B, {pb} ns/cycle), cycles {from}..{to}",
        args.a.display(),
        args.b.display()
    );
    let (differ, first, outcomes) = report_pairs(&mut s, &pairs, &chg, &sides, from, to);
    if !others.is_empty() {
        let shown: Vec<&str> = others.iter().take(12).map(|&i| a.vars[i].name.as_str()).collect();
        let more = others.len().saturating_sub(shown.len());
        let _ = writeln!(
            s,
            "not compared ({} signals of A under the mapped scopes, not in the map): {}{}",
            others.len(),
            shown.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        );
    }
    match &first {
        None => {
            let _ = writeln!(s, "verdict: SAME ({} signals over {} cycles)", pairs.len(), to - from);
        }
        Some((c, name)) => {
            let differing: Vec<bool> = outcomes.iter().map(|o| o.first.is_some()).collect();
            write_window(&mut s, &a, (&pairs, &differing), &chg, &sides, (&others, &co), *c, to);
            if let Some(d) = constant_offset(&pairs, &chg, &sides, from, to) {
                let _ = writeln!(
                    s,
                    "hint: every compared signal agrees with B shifted by {d:+} cycle(s): B {} A by {} cycle(s)",
                    if d > 0 { "lags" } else { "leads" },
                    d.abs()
                );
            }
            let _ = writeln!(
                s,
                "verdict: DIFFER ({differ} of {} signals); first divergence at cycle {c} on {name}",
                pairs.len()
            );
        }
    }
    Ok((s, first.is_none(), warnings))
}

/// An error in a command-line option's value, named by the option.
fn arg_err(opt: &str, m: String) -> InputError {
    InputError::new(Path::new(opt), m)
}

/// The cycles to compare, `from..to`: those both waves cover whatever the offsets, within
/// `--from` / `--to` (refused when none, or more than can be compared).
fn span(
    args: &DiffArgs,
    pairs: &[Pair],
    (a, pa): (&Wave, f64),
    (b, pb): (&Wave, f64),
) -> Result<(i64, i64), InputError> {
    let from = args.from.unwrap_or(0).min(i64::MAX as u64 / 2) as i64;
    let (end_a, end_b) = (last_cycle(a, pa) as i64, last_cycle(b, pb) as i64);
    // Compare only the cycles both waves cover, whatever the offsets.
    let max_off = pairs.iter().map(|p| p.off).max().unwrap_or(0).max(0);
    let natural = (end_a + 1).min(end_b + 1 - max_off);
    let to = match args.to {
        // Past the end of either wave there is nothing to compare.
        Some(t) => (t.min(i64::MAX as u64 / 2) as i64).min(natural),
        None => natural,
    };
    if to <= from {
        return Err(arg_err(
            "--from",
            format!("no cycle to compare: A ends at cycle {end_a}, B at {end_b} (B's clock {pb} ns)"),
        ));
    }
    if to - from > MAX_CYCLES {
        return Err(arg_err(
            "--to",
            format!(
                "{} cycles to compare (more than {MAX_CYCLES}): narrow with --from / --to",
                to - from
            ),
        ));
    }
    Ok((from, to))
}

/// One line per pair (same, unused, or where it first differs with the cycles before it);
/// returns how many differ, the first divergence (cycle, A's label) and each pair's outcome.
fn report_pairs<'c>(
    s: &mut String,
    pairs: &[Pair],
    chg: &dyn Fn(usize) -> Changes<'c>,
    sides: &Sides,
    from: i64,
    to: i64,
) -> (usize, Option<(i64, String)>, Vec<Outcome>) {
    let w = pairs.iter().map(|p| p.a.label.len()).max().unwrap_or(0);
    let mut differ = 0usize;
    let mut first: Option<(i64, String)> = None;
    let mut outcomes = Vec::new();
    for (k, p) in pairs.iter().enumerate() {
        let o = compare(p, &chg(k), sides, p.off, from, to);
        let mut off_txt = if p.off != 0 {
            format!(" (offset {:+})", p.off)
        } else {
            String::new()
        };
        if let Some(wh) = &p.when {
            off_txt.push_str(&format!(" (when {})", wh.label));
        }
        let names = format!("{:<w$} = {}{off_txt}", p.a.label, p.b.label);
        let Some((c0, va, vb)) = &o.first else {
            if o.compared == 0 {
                let _ = writeln!(s, "  unused  {names}: never compared (its `when` is never high)");
            } else {
                let _ = writeln!(s, "  same    {names}");
            }
            outcomes.push(o);
            continue;
        };
        differ += 1;
        let _ = writeln!(
            s,
            "  DIFFER  {names}: first at cycle {c0}: A {va}, B {vb}; {} of {} cycles differ",
            o.differ, o.compared
        );
        // The last CONTEXT cycles before the first divergence, as text (sampled again).
        let recent = window(p, &chg(k), sides, (*c0 - CONTEXT as i64).max(from), *c0);
        if !recent.is_empty() {
            let list = |a: bool| {
                recent
                    .iter()
                    .map(|(x, y)| if a { x.as_str() } else { y.as_str() })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let _ = writeln!(
                s,
                "          before, cycles {}..{c0}: A {}  B {}",
                c0 - recent.len() as i64,
                list(true),
                list(false)
            );
        }
        if first.as_ref().is_none_or(|(c, _)| *c0 < *c) {
            first = Some((*c0, p.a.label.clone()));
        }
        outcomes.push(o);
    }
    (differ, first, outcomes)
}

/// The pairs a map file names, and the clock it gives B (refused at the map's line).
fn map_pairs(mp: &Path, a: &Wave, b: &Wave) -> Result<(Vec<Pair>, Option<f64>), InputError> {
    let text = yaml::read(mp)?;
    let m: MapFile = yaml::parse(mp, &text)?;
    if m.signals.is_empty() {
        return Err(InputError::at_key(
            mp,
            &text,
            "signals",
            "signals: the map names no signal",
        ));
    }
    if let Some(c) = m.clock_ns.filter(|c| !(c.is_finite() && *c > 0.0)) {
        return Err(InputError::at_key(
            mp,
            &text,
            "clock_ns",
            format!("clock_ns {c}: must be > 0"),
        ));
    }
    let mut pairs = Vec::new();
    for e in &m.signals {
        let sa = resolve(&e.a, a).map_err(|msg| InputError::at_key(mp, &text, &e.a, msg))?;
        let sb = resolve(&e.b, b).map_err(|msg| InputError::at_key(mp, &text, &e.b, msg))?;
        if a.vars[sa.var].width.is_none() != b.vars[sb.var].width.is_none()
            && (sa.slice.is_some() || sb.slice.is_some())
        {
            return Err(InputError::at_key(
                mp,
                &text,
                &e.b,
                format!("`{}` and `{}`: a real against a slice", e.a, e.b),
            ));
        }
        if e.offset.unsigned_abs() > 1 << 40 {
            return Err(InputError::at_key(
                mp,
                &text,
                "offset",
                format!("offset {}: out of range", e.offset),
            ));
        }
        let when = match &e.when {
            Some(w) => Some(resolve(w, a).map_err(|msg| InputError::at_key(mp, &text, w, msg))?),
            None => None,
        };
        pairs.push(Pair {
            a: sa,
            b: sb,
            off: e.offset,
            when,
        });
    }
    Ok((pairs, m.clock_ns))
}

/// Without a map: every signal of A paired with B's of the same full name.
fn same_name_pairs(args: &DiffArgs, a: &Wave, b: &Wave) -> Result<Vec<Pair>, InputError> {
    // A full name declared more than once (two `$var`s of one name in one scope) pairs
    // its declarations in order: A's k-th with B's k-th, so a wave equals itself.
    // (Names looked up in an index of B, not by a scan per variable.)
    let mut in_b: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (j, v) in b.vars.iter().enumerate() {
        in_b.entry(v.name.as_str()).or_default().push(j);
    }
    let mut pairs = Vec::new();
    let mut nth_a: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, v) in a.vars.iter().enumerate() {
        let k = nth_a.entry(v.name.as_str()).or_insert(0);
        *k += 1;
        if let Some(&j) = in_b.get(v.name.as_str()).and_then(|js| js.get(*k - 1)) {
            let label = if *k == 1 {
                v.name.clone()
            } else {
                format!("{} (declaration {k})", v.name)
            };
            pairs.push(Pair {
                a: Sel {
                    var: i,
                    slice: None,
                    label: label.clone(),
                },
                b: Sel {
                    var: j,
                    slice: None,
                    label,
                },
                off: 0,
                when: None,
            });
        }
    }
    if pairs.is_empty() {
        return Err(InputError::new(
            &args.b,
            format!(
                "no signal has the same full name in {} and here (e.g. `{}`): give --map MAP.yaml",
                args.a.display(),
                a.vars.first().map_or("", |v| v.name.as_str())
            ),
        ));
    }
    Ok(pairs)
}

/// One line per wave whose reader printed warnings (for stderr: never part of the report).
fn reader_warnings(a: &Wave, b: &Wave) -> Vec<String> {
    [a, b]
        .iter()
        .filter_map(|w| {
            let first = w.warnings.first()?;
            let more = match w.warnings.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more line(s))"),
            };
            Some(format!(
                "{}: warning: the wave reader said: {}{more}",
                w.path.display(),
                first.escape_debug()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::waves::Val;

    #[test]
    fn slices_and_normal_forms() {
        assert_eq!(split_slice("a.b[7:4]"), Some(("a.b", 7, 4)));
        assert_eq!(split_slice("a.b[3]"), Some(("a.b", 3, 3)));
        assert_eq!(split_slice("a.b[1:4]"), None);
        assert_eq!(split_slice("a.b"), None);
        let v = Val::Bits("10110".into());
        assert_eq!(normalize(&v, None), Norm::Num("10110".into()));
        assert_eq!(normalize(&v, Some((2, 1))), Norm::Num("11".into()));
        assert_eq!(normalize(&v, Some((7, 5))), Norm::Num("0".into()));
        assert_eq!(normalize(&Val::Bits("0x1".into()), None), Norm::Raw("0x1".into()));
        assert!(Norm::Num("101".into()).same(&Norm::Real(5.0)));
        assert_eq!(Norm::Num("1010".into()).show(), "10");
    }
}
