//! The `cbfc` node: the TYPE1 ledgers per (dst, vc) and the TYPE2 ledgers per member, the
//! returns and the charges that move them, and what it tells and shows (see the folder's
//! header).

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, Cycle, Out, PortDecl, StreamIn, StreamOut, Wake};
use hwsim_ports::{mcast_group, ChipId, CreditMsg, LgId, TYPE2_VC};

use super::{check, ledger_msg, Cbfc, CbfcView, Params};
use crate::rclink::bank_arbiter::NUM_VC;

/// Returns taken per cycle: the places of `credit` (the node takes them all in their cycle).
pub const RETURNS_PER_CYCLE: u32 = 8;

/// Ledgers one charge may move: one, or every member of the largest TYPE2 group.
fn charged_width(p: &Params) -> u32 {
    p.groups.iter().map(|g| g.len() as u32).max().unwrap_or(0).max(1)
}

/// Port list.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let w = charged_width(p);
    let mut v = vec![
        PortDecl::stream_in::<CreditMsg>("credit", RETURNS_PER_CYCLE)
            .optional()
            .doc("CBFC credit returns (src = the ledger's dst; vc 0..3 a bank, 4 TYPE2); unbound: none come back"),
        PortDecl::comb_stream_in::<CreditMsg>("charge", 1)
            .process(1)
            .optional()
            .doc("a grant's charge in its cycle: dst (for vc 4 the TYPE2 group's address), vc, credits"),
        PortDecl::comb_stream_out::<CreditMsg>("counts")
            .width(RETURNS_PER_CYCLE)
            .doc("after each return, in its cycle: the ledger's dst, vc and remaining `credits`"),
        PortDecl::stream_out::<CreditMsg>("charged")
            .process(1)
            .width(w)
            .doc("after a charge: each charged ledger's dst, vc and remaining `credits`, for the next round"),
        PortDecl::output::<CreditMsg>("credit_view")
            .doc("after each ledger change: remaining credits of the (dst, vc) that changed"),
    ];
    if !p.groups.is_empty() {
        // The TYPE2 ledgers' counts go to the TYPE2 queue (`type2`), which gates its head on them.
        v.push(
            PortDecl::comb_stream_out::<CreditMsg>("t2_counts")
                .width(RETURNS_PER_CYCLE)
                .doc("after each TYPE2 return, in its cycle: the member's dst, vc 4 and remaining `credits`"),
        );
        v.push(
            PortDecl::stream_out::<CreditMsg>("t2_charged")
                .process(1)
                .width(w)
                .doc("after a TYPE2 charge: each member ledger's remaining `credits`, for the next round"),
        );
    }
    v.extend(CbfcView::ports("", p.view_dsts));
    v
}

/// Adds the controller as `PATH.cbfc` beside its user `PATH.{user}` (the node whose round
/// reads the counts: `vc_queues`, in a TX and in the standalone bank arbiter alike),
/// counting in the composite's scope, wired as every user wires it: `counts` to the user's
/// `cbfc_counts`, `charged` to its `cbfc_charged`, its `cbfc_charge` back to `charge`; the
/// composite's `credit` is the node's.
pub fn add_wired(nl: &mut hwsim_hw::Netlist, path: &str, p: Params, user: &str) -> Result<(), hwsim_hw::ElabError> {
    let node = |n: &str| hwsim_hw::dotted(path, n);
    let c_ports = ports(&p);
    crate::split::add_counting_in_scope(nl, path, "cbfc", "cbfc", c_ports, p, build)?;
    for (from, to) in [
        ("cbfc.counts".to_string(), format!("{user}.cbfc_counts")),
        ("cbfc.charged".to_string(), format!("{user}.cbfc_charged")),
        (format!("{user}.cbfc_charge"), "cbfc.charge".to_string()),
    ] {
        nl.connect(&node(&from), &node(&to), None)?;
    }
    nl.export(&node("credit"), &node("cbfc.credit"))
}

/// Places the VC queues give `charged` (its `cbfc_charged`): one charge a cycle, taken by the
/// core's round in the next (a pop frees its place for the producer one cycle later).
pub fn charged_depth(p: &Params) -> u32 {
    2 * charged_width(p)
}

/// The node.
pub struct CbfcNode {
    chip: ChipId,
    lg: LgId,
    t1: Cbfc,
    t2: Cbfc,
    groups: Vec<Vec<ChipId>>,
    view: CbfcView,
    credit: StreamIn<CreditMsg>,
    charge: StreamIn<CreditMsg>,
    counts: StreamOut<CreditMsg>,
    charged: StreamOut<CreditMsg>,
    /// The TYPE2 ledgers' counts, to the TYPE2 queue (with groups only).
    t2_counts: Option<StreamOut<CreditMsg>>,
    t2_charged: Option<StreamOut<CreditMsg>>,
    credit_view: Out<CreditMsg>,
    c_outstanding: CounterId,
    c_latency: CounterId,
    /// Value last written to `credits_outstanding`.
    shown: u64,
}

/// Binds ports; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    let (t1, t2) = check(p)?;
    Ok(Box::new(CbfcNode {
        chip: p.chip,
        lg: p.lg,
        view: CbfcView::bind("", p.view_dsts, b, &t1)?,
        t1,
        t2,
        groups: p.groups.clone(),
        credit: b.stream_in("credit")?,
        charge: b.stream_in("charge")?,
        counts: b.stream_out("counts")?,
        charged: b.stream_out("charged")?,
        t2_counts: if p.groups.is_empty() {
            None
        } else {
            Some(b.stream_out("t2_counts")?)
        },
        t2_charged: if p.groups.is_empty() {
            None
        } else {
            Some(b.stream_out("t2_charged")?)
        },
        credit_view: b.output("credit_view")?,
        c_outstanding: b.counter("credits_outstanding"),
        c_latency: b.counter("credit_latency_max"),
        shown: 0,
    }))
}

impl CbfcNode {
    /// A ledger's count as a message (`credits` = remaining).
    fn count_msg(&self, dst: ChipId, vc: u8, remaining: u32) -> CreditMsg {
        ledger_msg(self.chip, self.lg, dst, vc, remaining)
    }

    /// One return: the ledger it names gets its credits back; its count goes to `counts`.
    fn on_return(&mut self, ctx: &mut Ctx<'_>, m: &CreditMsg) {
        if m.dst == self.chip && m.lg == self.lg && m.vc == TYPE2_VC {
            let l = match self.t2.give_back(m.src, TYPE2_VC, m.credits as u32) {
                Ok(l) => l,
                Err((l, why)) => {
                    ctx.violation(format!("TYPE2: {why}"));
                    l
                }
            };
            let msg = self.count_msg(m.src, TYPE2_VC, self.t2.remaining(l));
            // A TYPE2 ledger exists only with groups, and so does the port.
            if let Some(o) = &self.t2_counts {
                o.push(msg);
            }
            return;
        }
        if m.dst != self.chip || m.lg != self.lg || m.vc as usize >= NUM_VC - 1 {
            ctx.violation(format!(
                "credit return for chip {} LG {} VC {} arrived at chip {} LG {}: {m:?}",
                m.dst, m.lg, m.vc, self.chip, self.lg
            ));
            return;
        }
        let l = match self.t1.give_back(m.src, m.vc, m.credits as u32) {
            Ok(l) => l,
            Err((l, why)) => {
                ctx.violation(why);
                l
            }
        };
        let msg = self.show(l);
        self.counts.push(msg);
    }

    /// One charge: a TYPE1 ledger, or every member of a TYPE2 group; each count to `charged`.
    fn on_charge(&mut self, ctx: &mut Ctx<'_>, m: &CreditMsg) {
        let cost = m.credits as u32;
        if m.vc == TYPE2_VC {
            let Some(g) = mcast_group(m.dst).filter(|&g| (g as usize) < self.groups.len()) else {
                ctx.violation(format!(
                    "TYPE2 charge for {}, not a known group's address: {m:?}",
                    m.dst
                ));
                return;
            };
            for i in 0..self.groups[g as usize].len() {
                let member = self.groups[g as usize][i];
                let l = self.t2.ledger(member, TYPE2_VC);
                if let Err(why) = self.t2.try_charge(l, cost) {
                    ctx.violation(format!("TYPE2: {why}"));
                }
                let msg = self.count_msg(member, TYPE2_VC, self.t2.remaining(l));
                if let Some(o) = &self.t2_charged {
                    o.push(msg);
                }
            }
            return;
        }
        if m.vc as usize >= NUM_VC - 1 {
            ctx.violation(format!("CBFC charge for VC {} (banks are 0..=3, 4 TYPE2): {m:?}", m.vc));
            return;
        }
        let l = self.t1.ledger(m.dst, m.vc);
        if let Err(why) = self.t1.try_charge(l, cost) {
            ctx.violation(why);
        }
        let msg = self.show(l);
        self.charged.push(msg);
    }

    /// After a change of TYPE1 ledger `l`: `credit_view` and `credits_d{d}`; returns its count.
    fn show(&mut self, l: usize) -> CreditMsg {
        let (dst, vc) = self.t1.key(l);
        let msg = self.count_msg(dst, vc, self.t1.remaining(l));
        self.credit_view.set(msg);
        self.view.show(&self.t1, dst);
        msg
    }

    fn show_outstanding(&mut self, ctx: &mut Ctx<'_>) {
        let outstanding = self.t1.outstanding() + self.t2.outstanding();
        if outstanding != self.shown {
            self.shown = outstanding;
            ctx.set_counter(self.c_outstanding, outstanding);
        }
    }

    fn latency(&self, ctx: &mut Ctx<'_>, now: Cycle, m: &CreditMsg) {
        if m.sent_at != 0 {
            let lat = now.saturating_sub(m.sent_at);
            if lat > ctx.counter(self.c_latency) {
                ctx.set_counter(self.c_latency, lat);
            }
        }
    }
}

impl Component for CbfcNode {
    /// Process 0: the returns.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        while let Some(m) = self.credit.pop() {
            self.latency(ctx, now, &m);
            self.on_return(ctx, &m);
        }
        self.show_outstanding(ctx);
        Wake::OnInput
    }

    /// Process 1: the grant's charge.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        while let Some(m) = self.charge.pop() {
            self.on_charge(ctx, &m);
        }
        self.show_outstanding(ctx);
        Wake::OnInput
    }
}
