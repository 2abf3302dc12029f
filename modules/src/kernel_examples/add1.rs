//! A clocked register that adds one: `out(n) = in(n−1) + 1`. Chained N deep it is the W3
//! workload (the SystemC reference: a chain of clocked SC_METHOD registers).
//!
//! ```text
//!   in : u64 -->[ +1 | reg ]--> out : u64
//! ```
//! Latency 1 cycle. Woken only when `in` changes (a register whose input holds keeps its output).

use hwsim_hw::{Binder, Component, Ctx, In, Out, PortDecl, Wake};
use serde::{Deserialize, Serialize};

/// Parameters (none).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Port list.
pub fn ports(_p: &Params) -> Vec<PortDecl> {
    vec![
        PortDecl::input::<u64>("in").doc("register input"),
        PortDecl::output::<u64>("out").doc("in + 1, one cycle later"),
    ]
}

/// The block.
pub struct Add1 {
    input: In<u64>,
    out: Out<u64>,
}

/// Binds ports.
pub fn build(_p: &Params, b: &mut Binder) -> Result<Box<dyn Component>, String> {
    Ok(Box::new(Add1 {
        input: b.input("in")?,
        out: b.output("out")?,
    }))
}

impl Component for Add1 {
    #[inline]
    fn tick(&mut self, _ctx: &mut Ctx<'_>) -> Wake {
        self.out.set(self.input.get().wrapping_add(1));
        Wake::OnInput
    }
}
