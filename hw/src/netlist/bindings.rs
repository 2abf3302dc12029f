//! The netlist's bindings checked and laid out per port: the driver of each input, the first
//! consumer of each output, the capacity a binding sets, in flat arrays indexed by port.

use super::{Endpoint, Netlist};
use crate::error::ElabError;
use crate::port::{Dir, Shape};

/// No endpoint (in a packed endpoint array).
pub(super) const NONE: u64 = u64::MAX;

/// An endpoint packed in one word: instance in the high half, port in the low.
pub(super) fn pack((i, p): Endpoint) -> u64 {
    ((i as u64) << 32) | p as u64
}

pub(super) fn unpack(e: u64) -> Endpoint {
    ((e >> 32) as usize, (e & 0xffff_ffff) as usize)
}

/// The checked bindings of a netlist (see `Netlist::bindings`), per port in one flat array
/// each (instance `i`'s ports from `base[i]`): a 32×32 torus has two million ports, and hashing
/// each endpoint several times was a second of its elaboration.
pub(super) struct Bindings {
    pub(super) base: Vec<u32>,
    /// Per input: its driver (packed), or `NONE`.
    pub(super) driver: Vec<u64>,
    /// Per output: its first consumer (packed), or `NONE`.
    pub(super) consumer: Vec<u64>,
    /// Per stream input: the capacity its binding sets, 0 for none.
    pub(super) cap_override: Vec<u32>,
}

impl Bindings {
    /// The flat index of an endpoint.
    pub(super) fn flat(&self, (i, p): Endpoint) -> usize {
        self.base[i] as usize + p
    }
    /// The ports in all, flat.
    pub(super) fn len(&self) -> usize {
        *self.base.last().unwrap_or(&0) as usize
    }
    pub(super) fn driver_of(&self, e: Endpoint) -> Option<Endpoint> {
        let d = self.driver[self.flat(e)];
        (d != NONE).then(|| unpack(d))
    }
}

impl Netlist {
    /// The bindings, checked: the driver of each input, the consumers of each output and the
    /// capacities set on bindings. Refuses two drivers on one input, a stream with two consumers,
    /// a zero capacity, an unbound input and an unbound stream output.
    pub(super) fn bindings(&self) -> Result<Bindings, ElabError> {
        let mut base = Vec::with_capacity(self.insts.len() + 1);
        let mut n = 0u32;
        for inst in &self.insts {
            base.push(n);
            n += inst.ports.len() as u32;
        }
        base.push(n);
        let mut b = Bindings {
            base,
            driver: vec![NONE; n as usize],
            consumer: vec![NONE; n as usize],
            cap_override: vec![0; n as usize],
        };
        for bind in &self.binds {
            let (to, from) = (b.flat(bind.to), b.flat(bind.from));
            if let Some(first) = b.driver_of(bind.to) {
                return Err(ElabError::DoubleDriver {
                    input: self.endpoint(bind.to),
                    first: self.endpoint(first),
                    second: self.endpoint(bind.from),
                });
            }
            b.driver[to] = pack(bind.from);
            let first = b.consumer[from];
            if first != NONE && self.insts[bind.from.0].ports[bind.from.1].shape == Shape::Stream {
                return Err(ElabError::StreamFanout {
                    output: self.endpoint(bind.from),
                    first: self.endpoint(unpack(first)),
                    second: self.endpoint(bind.to),
                });
            }
            if first == NONE {
                b.consumer[from] = pack(bind.to);
            }
            if let Some(cap) = bind.capacity {
                if cap == 0 {
                    return Err(ElabError::Build {
                        instance: self.insts[bind.to.0].path.clone(),
                        message: format!("stream `{}` capacity must be ≥ 1", self.endpoint(bind.to)),
                    });
                }
                b.cap_override[to] = cap;
            }
        }
        for (i, inst) in self.insts.iter().enumerate() {
            for (p, d) in inst.ports.iter().enumerate() {
                let unbound_input = d.dir == Dir::In && !d.optional && b.driver_of((i, p)).is_none();
                let unbound_stream =
                    d.dir == Dir::Out && d.shape == Shape::Stream && b.consumer[b.flat((i, p))] == NONE;
                if !unbound_input && !unbound_stream {
                    continue;
                }
                // A port a composite exports is reported as the composite's.
                let (instance, kind, port) = self
                    .outer_input((i, p))
                    .unwrap_or_else(|| (inst.path.clone(), inst.kind.clone(), d.name.clone()));
                if unbound_input {
                    return Err(ElabError::UnboundInput {
                        instance,
                        kind,
                        port,
                        type_name: d.describe(),
                    });
                }
                return Err(ElabError::UnboundStreamOutput { instance, kind, port });
            }
        }
        Ok(b)
    }
}
