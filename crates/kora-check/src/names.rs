//! The interner for attribute, method, field and keyword names, seeded with the well-known ones.

use rustc_hash::FxHashMap;

use crate::hir::{sym, Sym};

#[derive(Debug, Clone)]
pub struct Interner {
    names: Vec<String>,
    map: FxHashMap<String, Sym>,
}

impl Default for Interner {
    fn default() -> Interner {
        let mut i = Interner {
            names: Vec::new(),
            map: FxHashMap::default(),
        };
        for n in sym::WELL_KNOWN {
            i.intern(n);
        }
        i
    }
}

impl Interner {
    pub fn intern(&mut self, name: &str) -> Sym {
        if let Some(s) = self.map.get(name) {
            return *s;
        }
        let s = Sym(self.names.len() as u32);
        self.names.push(name.to_string());
        self.map.insert(name.to_string(), s);
        s
    }

    pub fn get(&self, name: &str) -> Option<Sym> {
        self.map.get(name).copied()
    }

    pub fn name(&self, s: Sym) -> &str {
        &self.names[s.0 as usize]
    }

    /// Every name interned so far; `Sym(i)` is the `i`th.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn into_names(self) -> Vec<String> {
        self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_names_keep_their_constants() {
        let mut i = Interner::default();
        assert_eq!(i.intern("append"), sym::APPEND);
        assert_eq!(i.intern("strict"), sym::STRICT);
        let fresh = i.intern("amount");
        assert_eq!(i.name(fresh), "amount");
        assert_eq!(i.intern("amount"), fresh);
    }
}
