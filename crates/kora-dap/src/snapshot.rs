//! The stopped program as plain data: frames, names and values copied out of the interpreter so another thread can answer from them.
//!
//! Taken once per stop, on the interpreter's thread, before it blocks.
//! Containers are expanded eagerly, within a budget so a huge or deeply
//! nested value cannot stall the stop; cycles are shown as `[...]`.

use std::path::PathBuf;

use kora_check::hir::{ModId, Program, StmtKind, Target};
use kora_runtime::observe::debug::FrameStack;
use kora_runtime::value::format::{repr, type_name_in};
use kora_runtime::Value;
use kora_syntax::LineIndex;

/// How many values one stop copies at most; past it, containers show no children.
const NODE_BUDGET: usize = 20_000;
/// How many elements of one container are listed.
const MAX_CHILDREN: usize = 1_000;
/// How long a value's one-line preview may grow.
const PREVIEW_CHARS: usize = 160;

/// One named value, with its children when it is a container.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub value: String,
    pub ty: String,
    pub children: Vec<Var>,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub name: String,
    pub path: PathBuf,
    pub module: ModId,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    /// Function frames have locals; a module's top level has only globals.
    pub locals: Option<Vec<Var>>,
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Innermost first, as the protocol lists them.
    pub frames: Vec<Frame>,
    /// Each module's globals, for the modules that have a frame.
    pub globals: Vec<(ModId, Vec<Var>)>,
}

/// Copies the stack of a stopped program.
pub fn take(prog: &Program, lines: &[LineIndex], stack: &dyn FrameStack) -> Snapshot {
    let mut budget = NODE_BUDGET;
    let infos = stack.frames();
    let mut snap = Snapshot::default();
    for f in infos.iter().rev() {
        let m = f.module.0 as usize;
        let module = &prog.modules[m];
        let src = &module.source;
        let (line, column) = lines[m].line_col(src, f.at.start);
        // A block statement is shown by its first line, not its whole body.
        let first_line_end = src
            .get(f.at.start as usize..)
            .and_then(|t| t.find('\n'))
            .map(|i| f.at.start + i as u32)
            .unwrap_or(f.at.end)
            .min(f.at.end);
        let (end_line, end_column) = lines[m].line_col(src, first_line_end);
        let top = f.func == "<module>";
        let locals = (!top).then(|| {
            f.locals
                .iter()
                .map(|(n, v)| var(prog, n.clone(), v, &mut budget, &mut Vec::new()))
                .collect()
        });
        snap.frames.push(Frame {
            name: if top {
                let file = module.path.file_name().map(|n| n.to_string_lossy());
                format!("<module {}>", file.unwrap_or_default())
            } else {
                f.func.clone()
            },
            path: module.path.clone(),
            module: f.module,
            line,
            column,
            end_line,
            end_column,
            locals,
        });
        if !snap.globals.iter().any(|(gm, _)| *gm == f.module) {
            let declared = declarations(prog, f.module);
            let globals = stack
                .globals(f.module)
                .iter()
                .enumerate()
                .filter(|(i, (_, v))| !declared.contains(&(*i as u32)) && !is_declaration(v))
                .map(|(_, g)| g)
                .map(|(n, v)| var(prog, n.clone(), v, &mut budget, &mut Vec::new()))
                .collect();
            snap.globals.push((f.module, globals));
        }
    }
    snap
}

/// The module slots that `def` and `use` bind: shown neither before nor after they run.
fn declarations(prog: &Program, m: ModId) -> Vec<u32> {
    prog.module(m)
        .body
        .body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Def(Target::Global(g), _) | StmtKind::Use(Target::Global(g), _) => Some(*g),
            _ => None,
        })
        .collect()
}

/// Functions, types and modules are what the program declares, not its state.
fn is_declaration(v: &Value) -> bool {
    matches!(
        v,
        Value::Func(_) | Value::Builtin(_) | Value::Type(_) | Value::Module(_) | Value::Method(_)
    )
}

/// The identity of a container, to notice one that contains itself.
fn identity(v: &Value) -> Option<usize> {
    Some(match v {
        Value::List(l) => std::rc::Rc::as_ptr(l) as *const () as usize,
        Value::Dict(d) => std::rc::Rc::as_ptr(d) as *const () as usize,
        Value::Set(s) => std::rc::Rc::as_ptr(s) as *const () as usize,
        Value::Tuple(t) => std::rc::Rc::as_ptr(t) as *const () as usize,
        Value::Record(r) => std::rc::Rc::as_ptr(r) as *const () as usize,
        Value::Outcome(o) => std::rc::Rc::as_ptr(o) as *const () as usize,
        _ => return None,
    })
}

fn var(prog: &Program, name: String, v: &Value, budget: &mut usize, path: &mut Vec<usize>) -> Var {
    let v = match v {
        Value::Cell(c) => c.borrow().clone(),
        other => other.clone(),
    };
    let ty = type_name_in(prog, &v).to_string();
    let id = identity(&v);
    if id.is_some_and(|i| path.contains(&i)) {
        return Var {
            name,
            value: "[...]".into(),
            ty,
            children: Vec::new(),
        };
    }
    let value = preview(prog, &v);
    *budget = budget.saturating_sub(1);
    if *budget == 0 {
        return Var {
            name,
            value,
            ty,
            children: Vec::new(),
        };
    }
    let items = children(prog, &v);
    if let Some(i) = id {
        path.push(i);
    }
    let mut kids = Vec::with_capacity(items.len().min(MAX_CHILDREN));
    for (n, c) in items.into_iter().take(MAX_CHILDREN) {
        if *budget == 0 {
            break;
        }
        kids.push(var(prog, n, &c, budget, path));
    }
    if id.is_some() {
        path.pop();
    }
    Var {
        name,
        value,
        ty,
        children: kids,
    }
}

/// A container's elements, named as the user would write the lookup.
fn children(prog: &Program, v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::List(l) => indexed(&l.borrow()),
        Value::Tuple(t) => indexed(t),
        Value::Set(s) => s
            .borrow()
            .iter()
            .enumerate()
            .map(|(i, k)| (format!("{{{i}}}"), k.0.clone()))
            .collect(),
        Value::Dict(d) => d
            .borrow()
            .iter()
            .map(|(k, v)| {
                let mut name = String::new();
                repr(prog, &k.0, &mut name);
                (format!("[{}]", clip(name)), v.clone())
            })
            .collect(),
        Value::Record(r) => {
            let rec = prog.record(r.ty);
            rec.fields
                .iter()
                .zip(r.fields.borrow().iter())
                .map(|(f, v)| (prog.name(f.name).to_string(), v.clone()))
                .collect()
        }
        Value::Outcome(o) => vec![("value".to_string(), o.payload.clone())],
        _ => Vec::new(),
    }
}

fn indexed(items: &[Value]) -> Vec<(String, Value)> {
    items
        .iter()
        .take(MAX_CHILDREN)
        .enumerate()
        .map(|(i, v)| (format!("[{i}]"), v.clone()))
        .collect()
}

/// The value as `repr` writes it, cut to one readable line.
fn preview(prog: &Program, v: &Value) -> String {
    let big = match v {
        Value::List(l) => l.borrow().len() > MAX_CHILDREN,
        Value::Dict(d) => d.borrow().len() > MAX_CHILDREN,
        Value::Set(s) => s.borrow().len() > MAX_CHILDREN,
        Value::Tuple(t) => t.len() > MAX_CHILDREN,
        _ => false,
    };
    if big {
        // Rendering a huge container to show 160 characters of it is not worth the stall.
        let n = match v {
            Value::List(l) => l.borrow().len(),
            Value::Dict(d) => d.borrow().len(),
            Value::Set(s) => s.borrow().len(),
            Value::Tuple(t) => t.len(),
            _ => 0,
        };
        return format!("<{} of {n} items>", type_name_in(prog, v));
    }
    let mut s = String::new();
    repr(prog, v, &mut s);
    clip(s)
}

fn clip(mut s: String) -> String {
    if s.chars().count() > PREVIEW_CHARS {
        let cut = s
            .char_indices()
            .nth(PREVIEW_CHARS)
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        s.truncate(cut);
        s.push('…');
    }
    s
}
