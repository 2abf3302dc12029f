//! The type-erased port handles (`Binder::any_port`): read and driven by traced fields with
//! the typed handles' rules, and `Netlist::set_build` putting another component behind a node.

#[allow(dead_code, unused_imports)] // the helpers other test files use
mod common;

use common::comp;
use hwsim_hw::{Harness, PortDecl, Trace, TraceValue, Wake};

fn ports() -> Vec<PortDecl> {
    vec![
        PortDecl::comb_stream_in::<u16>("req", 1),
        PortDecl::comb_stream_out::<u16>("ans"),
        PortDecl::output::<u8>("last"),
        PortDecl::input::<bool>("en"),
        PortDecl::output::<f64>("real"),
    ]
}

/// A relay written against erased handles only: `ans = req + en`, `last` its low byte.
fn erased_relay() -> Harness {
    Harness::new(
        "erased",
        ports(),
        Box::new(|b| {
            let req = b.any_port("req")?;
            let ans = b.any_port("ans")?;
            let last = b.any_port("last")?;
            let en = b.any_port("en")?;
            assert_eq!(req.slots(), 1);
            let mut v = [TraceValue::Bits(0)];
            let mut e = [TraceValue::Bits(0)];
            comp(move |ctx| {
                assert!(en.read(&mut e));
                if req.read(&mut v) {
                    assert!(req.pop());
                    let TraceValue::Bits(x) = v[0] else { unreachable!() };
                    let TraceValue::Bits(k) = e[0] else { unreachable!() };
                    let y = [TraceValue::Bits(x + k)];
                    if let Err(m) = ans.write(&y) {
                        ctx.violation(m);
                    }
                    last.write(&[TraceValue::Bits(x & 0xff)]).unwrap();
                }
                Wake::OnInput
            })
        }),
        1,
        1,
    )
    .unwrap()
}

#[test]
fn erased_handles_read_and_drive_in_the_same_cycle() {
    let mut h = erased_relay();
    // A registered input: seen from the cycle after the step that commits it.
    h.poke("en", true);
    h.step().unwrap();
    assert!(h.push("req", 0x1234u16));
    h.step().unwrap();
    // The combinational answer is in the sink at once; the registered byte a cycle later.
    assert_eq!(h.pop::<u16>("ans"), Some(0x1235));
    h.step().unwrap();
    assert_eq!(h.peek::<u8>("last"), 0x34);
}

#[test]
fn a_push_without_room_is_refused_with_a_message() {
    let mut h = erased_relay();
    assert!(h.push("req", 1u16));
    h.step().unwrap();
    // The sink (capacity 1) still holds the first answer: the second push has no room.
    assert!(h.push("req", 2u16));
    let e = h.step().unwrap_err().to_string();
    assert!(e.contains("no room for a push"), "{e}");
}

#[test]
fn load_is_the_inverse_of_sample_and_refuses_wide_bits() {
    let mut out = [TraceValue::Bits(0)];
    0xabu8.sample(&mut out);
    assert_eq!(u8::load(&out), Some(0xab));
    assert_eq!(u8::load(&[TraceValue::Bits(0x100)]), None);
    assert_eq!(bool::load(&[TraceValue::Bits(2)]), None);
    assert_eq!(f64::load(&[TraceValue::Real(0.5)]), Some(0.5));
    assert_eq!(u64::load(&[TraceValue::Real(0.5)]), None);
}

#[test]
fn set_build_puts_another_component_behind_the_node() {
    let mut nl = hwsim_hw::Netlist::new();
    nl.add(
        "n",
        "k",
        vec![PortDecl::output::<u8>("o")],
        Box::new(|b| {
            let o = b.output::<u8>("o")?;
            comp(move |_| {
                o.set(1);
                Wake::OnInput
            })
        }),
    )
    .unwrap();
    nl.set_build(
        "n",
        Box::new(|b| {
            let o = b.any_port("o")?;
            comp(move |_| {
                o.write(&[TraceValue::Bits(7)]).unwrap();
                Wake::OnInput
            })
        }),
    )
    .unwrap();
    assert!(nl.set_build("nope", Box::new(|_| Err("x".into()))).is_err());
    let mut sim = nl.elaborate(1).unwrap();
    sim.run(3).unwrap();
    let net = sim.net("n.o").unwrap();
    let mut v = [TraceValue::Bits(0)];
    net.sample(3, &mut v);
    assert_eq!(v[0], TraceValue::Bits(7));
}
