//! `csv`: rows parse into a declared row type (record by header, tuple by position), naming the line and column that fail.
//!
//! The defect fixed: Python's `csv` yields lists or dicts of strings and
//! every conversion is left to the caller, so `"1,234"` or an empty cell
//! fails far from the file. Here each cell is converted to its field's type
//! at the parse, and a bad cell is an `Err` naming where it is.

use kora_check::std_api::StdFn;
use kora_check::types::Ty;

use super::typed::Lenience;
use super::{err, ok, Args};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let delim = match a.opt_str(2)? {
        None => b',',
        Some(d) if d.len() == 1 && d.is_ascii() => d.as_bytes()[0],
        Some(d) => {
            return Err(RtError::new(
                codes::STD_VALUE,
                format!(
                    "`{}`: the delimiter must be one ASCII character, got {d:?}",
                    a.name()
                ),
            ))
        }
    };
    match a.func {
        StdFn::CsvParse => {
            let text = a.str(0)?;
            let header = a.bool(1, true)?;
            let elem = match &a.expect {
                Ty::List(t) => (**t).clone(),
                _ => Ty::Any,
            };
            Ok(match parse(it, text, header, delim, &elem) {
                Ok(rows) => ok(Value::list(rows)),
                Err(why) => err(why),
            })
        }
        StdFn::CsvEncode => {
            let rows = a.list(0)?;
            let header = match a.get(1) {
                None => None,
                Some(_) => Some(
                    a.list(1)?
                        .iter()
                        .map(|v| crate::value::format::to_string(&it.prog, v))
                        .collect::<Vec<_>>(),
                ),
            };
            encode(it, &rows, header, delim)
                .map(Value::str)
                .map_err(|m| RtError::new(codes::NOT_ENCODABLE, m))
        }
        _ => unreachable!("csv::call got {:?}", a.func),
    }
}

#[cfg(test)]
pub(super) fn parse_for_tests(it: &mut Interp, text: &str, header: bool, elem: &Ty) -> bool {
    parse(it, text, header, b',', elem).is_ok()
}

fn parse(
    it: &mut Interp,
    text: &str,
    header: bool,
    delim: u8,
    elem: &Ty,
) -> Result<Vec<Value>, String> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(delim)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = rdr.records();
    let names: Option<Vec<String>> = if header {
        match records.next() {
            None => return Ok(Vec::new()),
            Some(r) => Some(
                r.map_err(|e| csv_why(&e))?
                    .iter()
                    .map(|s| s.trim_start_matches('\u{feff}').to_string())
                    .collect(),
            ),
        }
    } else {
        None
    };
    let prog = it.prog.clone();
    if let (Ty::Record(id, name), Some(names)) = (elem, &names) {
        let rec = prog.record(*id);
        for f in &rec.fields {
            let fname = prog.name(f.name);
            let optional =
                f.default.is_some() || matches!(&f.ty, Ty::Union(ts) if ts.contains(&Ty::None));
            if !optional && !names.iter().any(|n| n == fname) {
                return Err(format!(
                    "line 1: no column `{fname}` for `{name}` (the header has: {})",
                    names.join(", ")
                ));
            }
        }
    }
    if matches!(elem, Ty::Record(..)) && names.is_none() {
        return Err("reading rows into a record needs a header line (`header=True`)".into());
    }
    let mut out = Vec::new();
    for r in records {
        let r = r.map_err(|e| csv_why(&e))?;
        let line = r.position().map(|p| p.line()).unwrap_or(0);
        let cells: Vec<&str> = r.iter().collect();
        if let Some(names) = &names {
            if cells.len() != names.len() && !(cells.len() == 1 && cells[0].is_empty()) {
                return Err(format!(
                    "line {line}: {} cells, but the header has {}",
                    cells.len(),
                    names.len()
                ));
            }
        }
        if cells.len() == 1 && cells[0].is_empty() {
            continue;
        }
        let row = match (elem, &names) {
            (Ty::Record(id, _), Some(names)) => {
                let rec = prog.record(*id);
                let mut d = Dict::default();
                for (n, c) in names.iter().zip(&cells) {
                    let Some(f) = rec.fields.iter().find(|f| prog.name(f.name) == n) else {
                        continue;
                    };
                    if c.is_empty() && f.default.is_some() {
                        continue;
                    }
                    d.insert(
                        Key(Value::str(n.as_str())),
                        cell(c, &f.ty).map_err(|w| format!("line {line}, column `{n}`: {w}"))?,
                    );
                }
                let mut path = format!("line {line}");
                it.narrow(Value::dict(d), elem, &mut path, Lenience::Strict)?
            }
            (Ty::Tuple(ts), _) => {
                if cells.len() != ts.len() {
                    return Err(format!(
                        "line {line}: {} cells, expected {}",
                        cells.len(),
                        ts.len()
                    ));
                }
                let mut vals = Vec::new();
                for (i, (c, t)) in cells.iter().zip(ts).enumerate() {
                    vals.push(
                        cell(c, t).map_err(|w| format!("line {line}, column {}: {w}", i + 1))?,
                    );
                }
                Value::tuple(vals)
            }
            (Ty::List(t) | Ty::TupleOf(t), _) => {
                let mut vals = Vec::new();
                for (i, c) in cells.iter().enumerate() {
                    vals.push(
                        cell(c, t).map_err(|w| format!("line {line}, column {}: {w}", i + 1))?,
                    );
                }
                if matches!(elem, Ty::List(_)) {
                    Value::list(vals)
                } else {
                    Value::tuple(vals)
                }
            }
            (Ty::Dict(_, vt), Some(names)) => {
                let mut d = Dict::default();
                for (n, c) in names.iter().zip(&cells) {
                    d.insert(
                        Key(Value::str(n.as_str())),
                        cell(c, vt).map_err(|w| format!("line {line}, column `{n}`: {w}"))?,
                    );
                }
                Value::dict(d)
            }
            (_, Some(names)) => {
                let mut d = Dict::default();
                for (n, c) in names.iter().zip(&cells) {
                    d.insert(Key(Value::str(n.as_str())), Value::str(*c));
                }
                Value::dict(d)
            }
            (_, None) => Value::list(cells.iter().map(|c| Value::str(*c)).collect()),
        };
        out.push(row);
    }
    Ok(out)
}

/// One cell's text as a value of `ty`; CSV has no types of its own, so the target decides.
pub(super) fn cell(c: &str, ty: &Ty) -> Result<Value, String> {
    let t = c.trim();
    match ty {
        Ty::Any | Ty::Str => Ok(Value::str(c)),
        Ty::Int => t
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| format!("expected an integer, found {c:?}")),
        Ty::Float => t
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| format!("expected a number, found {c:?}")),
        Ty::Bool => match t {
            "true" | "True" | "TRUE" | "1" => Ok(Value::Bool(true)),
            "false" | "False" | "FALSE" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, found {c:?}")),
        },
        Ty::None => {
            if t.is_empty() {
                Ok(Value::None)
            } else {
                Err(format!("expected an empty cell, found {c:?}"))
            }
        }
        Ty::Literal(ms) => {
            if ms.iter().any(|m| m == c) {
                Ok(Value::str(c))
            } else {
                Err(format!(
                    "{c:?} is not one of {}",
                    ms.iter()
                        .map(|m| format!("{m:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
        Ty::Union(ts) => {
            if t.is_empty() && ts.contains(&Ty::None) {
                return Ok(Value::None);
            }
            let mut first = None;
            for u in ts.iter().filter(|u| **u != Ty::None) {
                match cell(c, u) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            Err(first.unwrap_or_else(|| format!("no alternative fits {c:?}")))
        }
        other => Err(format!("a CSV cell cannot be read as `{other}`")),
    }
}

fn csv_why(e: &csv::Error) -> String {
    match e.position() {
        Some(p) => format!("line {}: {}", p.line(), e.kind_text()),
        None => e.to_string(),
    }
}

trait KindText {
    fn kind_text(&self) -> String;
}

impl KindText for csv::Error {
    fn kind_text(&self) -> String {
        match self.kind() {
            csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".into(),
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format!("{len} cells, expected {expected_len}"),
            _ => self.to_string(),
        }
    }
}

fn encode(
    it: &Interp,
    rows: &[Value],
    header: Option<Vec<String>>,
    delim: u8,
) -> Result<String, String> {
    let p = &it.prog;
    let mut w = csv::WriterBuilder::new()
        .delimiter(delim)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let text = |v: &Value| -> String {
        match v {
            Value::None => String::new(),
            other => crate::value::format::to_string(p, other),
        }
    };
    let mut cols = header;
    if cols.is_none() {
        cols = match rows.first() {
            Some(Value::Record(r)) => Some(
                p.record(r.ty)
                    .fields
                    .iter()
                    .map(|f| p.name(f.name).to_string())
                    .collect(),
            ),
            Some(Value::Dict(d)) => Some(d.borrow().keys().map(|k| text(&k.0)).collect()),
            _ => None,
        };
    }
    let io = |e: csv::Error| e.to_string();
    if let Some(cols) = &cols {
        w.write_record(cols).map_err(io)?;
    }
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = match row {
            Value::Record(r) => r.fields.borrow().iter().map(text).collect(),
            Value::Dict(d) => {
                let d = d.borrow();
                match &cols {
                    Some(cols) => cols
                        .iter()
                        .map(|c| {
                            d.get(&Key(Value::str(c.as_str())))
                                .map(text)
                                .unwrap_or_default()
                        })
                        .collect(),
                    None => d.values().map(text).collect(),
                }
            }
            Value::List(l) => l.borrow().iter().map(text).collect(),
            Value::Tuple(t) => t.iter().map(text).collect(),
            other => {
                return Err(format!(
                    "`csv.encode`: row {i} is a `{}`, not a record, dict, list or tuple",
                    other.type_name()
                ))
            }
        };
        w.write_record(&cells).map_err(io)?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
