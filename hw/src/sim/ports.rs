//! Finding a net by the port of any instance bound to it (`inst.port`), without a name per
//! reader: a reader's port is looked up through its instance's path and port list, kept from
//! elaboration, instead of a string alias per bound input made in advance. A 1024-chip torus
//! has about a million such ports; their aliases were built, hashed and dropped on every run
//! that looked up a handful of them (issue 49, `hwsim check` of a 32×32 torus).

use crate::fastmap::FastMap;

/// Per instance, its ports' names and the net each is bound to.
#[derive(Default)]
pub(crate) struct PortIndex {
    /// Instance path → instance (block) index.
    pub(crate) by_path: FastMap<String, usize>,
    /// Per instance, its ports' names in declaration order.
    pub(crate) names: Vec<Box<[String]>>,
    /// Per instance, per port: the net bound to it (`u32::MAX`: none).
    pub(crate) nets: Vec<Box<[u32]>>,
}

impl PortIndex {
    /// The net bound to the port `path` names (`inst.port`; a port name may hold dots, so the
    /// longest instance path that has the rest as a port wins, as for a composite's ports).
    pub(crate) fn net_of(&self, path: &str) -> Option<u32> {
        for (dot, _) in path.rmatch_indices('.') {
            let (inst, port) = (&path[..dot], &path[dot + 1..]);
            if let Some(&i) = self.by_path.get(inst) {
                if let Some(p) = self.names[i].iter().position(|n| n == port) {
                    let id = self.nets[i][p];
                    return (id != u32::MAX).then_some(id);
                }
            }
        }
        None
    }
}

/// The index of a list of names, by a hash of each (no copy of the names): a 32×32 torus
/// registers over a million counters, and sorting their names for a binary search took half a
/// second of every run. Equal names: the first is found.
pub(crate) struct NameIndex {
    /// Hash of a name → the first name with that hash.
    first: FastMap<u64, u32>,
    /// Names whose hash an earlier, different name has (searched in order: in practice none).
    collided: Vec<u32>,
}

fn hash(name: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<crate::fastmap::FastHasher>::default().hash_one(name)
}

impl NameIndex {
    pub(crate) fn new(names: &[String]) -> NameIndex {
        let mut first: FastMap<u64, u32> = FastMap::default();
        first.reserve(names.len());
        let mut collided = Vec::new();
        for (i, n) in names.iter().enumerate() {
            match first.entry(hash(n)) {
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i as u32);
                }
                std::collections::hash_map::Entry::Occupied(o) => {
                    if names[*o.get() as usize] != *n {
                        collided.push(i as u32);
                    }
                }
            }
        }
        NameIndex { first, collided }
    }
    /// The index of the first of `names` equal to `name` (`names`: the list it was built of).
    pub(crate) fn find(&self, names: &[String], name: &str) -> Option<u32> {
        let &i = self.first.get(&hash(name))?;
        if names[i as usize] == name {
            return Some(i);
        }
        self.collided.iter().copied().find(|&c| names[c as usize] == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_equal_names_is_found_and_a_missing_one_is_not() {
        let names: Vec<String> = ["a.x", "b.y", "a.x", "c"].iter().map(|s| s.to_string()).collect();
        let ix = NameIndex::new(&names);
        assert_eq!(ix.find(&names, "a.x"), Some(0));
        assert_eq!(ix.find(&names, "b.y"), Some(1));
        assert_eq!(ix.find(&names, "c"), Some(3));
        assert_eq!(ix.find(&names, "d"), None);
        assert_eq!(ix.find(&names, ""), None);
    }

    #[test]
    fn a_hash_shared_by_two_names_still_finds_each() {
        // Force the collision path: an index whose map holds the other name's entry.
        let names: Vec<String> = ["p", "q"].iter().map(|s| s.to_string()).collect();
        let mut first: FastMap<u64, u32> = FastMap::default();
        first.insert(hash("p"), 0);
        first.insert(hash("q"), 0);
        let ix = NameIndex {
            first,
            collided: vec![1],
        };
        assert_eq!(ix.find(&names, "p"), Some(0));
        assert_eq!(ix.find(&names, "q"), Some(1));
    }
}
