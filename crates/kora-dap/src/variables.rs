//! The editor's view of one stop: frames, and every container of the snapshot numbered as a `variablesReference`; watch expressions are looked up here.

use kora_check::hir::ModId;

use crate::snapshot::{Frame, Snapshot, Var};

/// One variable as the protocol lists it; `reference` is 0 for a leaf.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub value: String,
    pub ty: String,
    pub reference: i64,
}

pub struct StoppedView {
    pub frames: Vec<Frame>,
    /// Per frame: the reference of its locals (none at a module's top level) and of its module's globals.
    pub scopes: Vec<(Option<i64>, i64)>,
    /// `containers[r - 1]` is the list behind reference `r`.
    containers: Vec<Vec<Entry>>,
}

impl StoppedView {
    pub fn new(snapshot: Snapshot) -> StoppedView {
        let mut view = StoppedView {
            frames: Vec::new(),
            scopes: Vec::new(),
            containers: Vec::new(),
        };
        let mut globals: Vec<(ModId, i64)> = Vec::new();
        for (m, vars) in snapshot.globals {
            let r = view.add(vars);
            globals.push((m, r));
        }
        for mut f in snapshot.frames {
            let locals = f.locals.take().map(|vars| view.add(vars));
            let g = globals
                .iter()
                .find(|(m, _)| *m == f.module)
                .map(|(_, r)| *r)
                .unwrap_or_else(|| view.add(Vec::new()));
            view.scopes.push((locals, g));
            view.frames.push(f);
        }
        view
    }

    fn add(&mut self, vars: Vec<Var>) -> i64 {
        let index = self.containers.len();
        self.containers.push(Vec::new());
        let entries = vars
            .into_iter()
            .map(|v| {
                let reference = if v.children.is_empty() {
                    0
                } else {
                    self.add(v.children)
                };
                Entry {
                    name: v.name,
                    value: v.value,
                    ty: v.ty,
                    reference,
                }
            })
            .collect();
        self.containers[index] = entries;
        index as i64 + 1
    }

    pub fn variables(&self, reference: i64) -> Option<&[Entry]> {
        let i = usize::try_from(reference.checked_sub(1)?).ok()?;
        self.containers.get(i).map(Vec::as_slice)
    }

    /// A watch expression: a name, or a field path like `order.customer.name`. Nothing is evaluated.
    pub fn lookup(&self, frame: usize, expr: &str) -> Result<&Entry, String> {
        let expr = expr.trim();
        let parts: Vec<&str> = expr.split('.').map(str::trim).collect();
        if expr.is_empty() || !parts.iter().all(|p| is_name(p)) {
            return Err(format!(
                "`{expr}` is not a lookup: watch expressions are a name or a field path such as `order.total`, because evaluating anything else could call a model, spend budget or write a file"
            ));
        }
        let (locals, globals) = *self
            .scopes
            .get(frame)
            .ok_or_else(|| format!("there is no frame {frame}"))?;
        let find = |r: i64, name: &str| {
            self.variables(r)
                .and_then(|vs| vs.iter().find(|e| e.name == name))
        };
        let first = locals
            .and_then(|r| find(r, parts[0]))
            .or_else(|| find(globals, parts[0]))
            .ok_or_else(|| format!("`{}` is not defined in this frame", parts[0]))?;
        let mut cur = first;
        let mut path = parts[0].to_string();
        for p in &parts[1..] {
            cur = find(cur.reference, p)
                .ok_or_else(|| format!("`{path}` ({}) has no field `{p}`", cur.ty))?;
            path.push('.');
            path.push_str(p);
        }
        Ok(cur)
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn leaf(name: &str, value: &str) -> Var {
        Var {
            name: name.into(),
            value: value.into(),
            ty: "int".into(),
            children: Vec::new(),
        }
    }

    fn view() -> StoppedView {
        let order = Var {
            name: "order".into(),
            value: "Order(total=3)".into(),
            ty: "Order".into(),
            children: vec![leaf("total", "3")],
        };
        StoppedView::new(Snapshot {
            frames: vec![Frame {
                name: "f".into(),
                path: PathBuf::from("/x.ko"),
                module: ModId(0),
                line: 1,
                column: 1,
                end_line: 1,
                end_column: 2,
                locals: Some(vec![order]),
            }],
            globals: vec![(ModId(0), vec![leaf("limit", "10")])],
        })
    }

    #[test]
    fn names_and_field_paths_are_looked_up() {
        let v = view();
        assert_eq!(
            v.lookup(0, "order.total").map(|e| e.value.as_str()),
            Ok("3")
        );
        assert_eq!(v.lookup(0, " limit ").map(|e| e.value.as_str()), Ok("10"));
        assert!(v.lookup(0, "order.missing").is_err());
        assert!(v.lookup(0, "nothing").is_err());
    }

    #[test]
    fn anything_but_a_lookup_is_refused() {
        let v = view();
        for e in ["f(1)", "order.total + 1", "x[0]", "", "a..b"] {
            let err = v.lookup(0, e).err().unwrap_or_default();
            assert!(err.contains("not a lookup"), "{e}: {err}");
        }
    }
}
