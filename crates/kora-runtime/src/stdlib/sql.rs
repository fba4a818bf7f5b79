//! `sql`: SQLite through rusqlite (bundled); query text is a literal, values travel only as parameters.
//!
//! The defect fixed: string-built SQL. The checker refuses query text built
//! at the call (E0603); labels refuse unverified text reaching it at all.
//! Rows are read into the declared row type, naming the failing row and column.
//! `query` is a digested read, `execute` is world-changing: in a durable run
//! each write commits in one transaction with a row naming its effect in
//! `_kora_effects`, so a resume can tell whether it happened; `execute_many`
//! is one transaction in any run.

use std::cell::RefCell;

use rusqlite::types::{Value as Sql, ValueRef};
use serde_json::Value as Json;

use kora_check::std_api::{StdFn, StdType};
use kora_check::types::Ty;

use super::typed::Lenience;
use super::{err, ok, Args, Native};
use crate::durable::effect::{Intent, Kind, Observation, Recordable};
use crate::durable::journal::check::{record_sql, Check};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

/// An open database; `close()` empties it.
pub struct Db {
    conn: RefCell<Option<rusqlite::Connection>>,
    path: String,
    /// The database file's absolute path, where a resume looks for `_kora_effects`
    /// (`None` for `:memory:` and URIs, which a later process cannot look into).
    file: Option<String>,
}

impl crate::value::native::NativeObject for Db {
    fn std_type(&self) -> StdType {
        StdType::Db
    }

    fn repr(&self, out: &mut String) {
        out.push_str(&format!("<sql.Db {}>", self.label()));
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Db {
    pub fn label(&self) -> String {
        let state = if self.conn.borrow().is_some() {
            ""
        } else {
            " (closed)"
        };
        format!("{:?}{state}", self.path)
    }
}

/// Rows as they crossed the pipeline: recordable, so a journal can replay a query.
struct Rows {
    cols: Vec<String>,
    rows: Vec<Vec<Sql>>,
}

fn sql_json(v: &Sql) -> Json {
    match v {
        Sql::Null => Json::Null,
        Sql::Integer(i) => Json::from(*i),
        Sql::Real(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Sql::Text(s) => Json::String(s.clone()),
        Sql::Blob(b) => Json::Array(b.iter().map(|x| Json::from(*x)).collect()),
    }
}

fn json_sql(j: &Json) -> Option<Sql> {
    Some(match j {
        Json::Null => Sql::Null,
        Json::Number(n) => match n.as_i64() {
            Some(i) => Sql::Integer(i),
            None => Sql::Real(n.as_f64()?),
        },
        Json::String(s) => Sql::Text(s.clone()),
        Json::Array(a) => Sql::Blob(
            a.iter()
                .map(|x| x.as_u64().map(|b| b as u8))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

impl Recordable for Rows {
    fn to_record(&self) -> Json {
        serde_json::json!({
            "cols": self.cols,
            "rows": self.rows.iter().map(|r| r.iter().map(sql_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
        })
    }
    fn from_record(j: &Json) -> Option<Rows> {
        let cols = j
            .get("cols")?
            .as_array()?
            .iter()
            .map(|c| c.as_str().map(str::to_string))
            .collect::<Option<_>>()?;
        let rows = j
            .get("rows")?
            .as_array()?
            .iter()
            .map(|r| {
                r.as_array()?
                    .iter()
                    .map(json_sql)
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<_>>()?;
        Some(Rows { cols, rows })
    }
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let name = a.name();
    if a.func == StdFn::SqlOpen {
        let p = a.str(0)?.to_string();
        let host = it.host();
        let full = if p == ":memory:" {
            p.clone()
        } else {
            host.resolve(&p).to_string_lossy().into_owned()
        };
        let file = (p != ":memory:" && !p.starts_with("file:")).then(|| full.clone());
        let mut conn = None;
        let r = host.effect(&a.effect(Kind::SqlRead, &p, &name), |_| {
            let c =
                rusqlite::Connection::open(&full).map_err(|e| format!("cannot open `{p}`: {e}"))?;
            conn = Some(c);
            Ok(())
        })?;
        let conn = match (r, conn) {
            (Err(why), _) => return Ok(err(why)),
            (Ok(()), Some(c)) => c,
            // Replayed: the record says it opened; open it again for the calls that follow.
            (Ok(()), None) => match rusqlite::Connection::open(&full) {
                Ok(c) => c,
                Err(e) => return Ok(err(format!("cannot open `{p}`: {e}"))),
            },
        };
        return Ok(ok(Value::Native(std::rc::Rc::new(Native::new(Db {
            conn: RefCell::new(Some(conn)),
            path: p,
            file,
        })))));
    }
    let handle = match &a.recv {
        Some(Value::Native(n)) => n.clone(),
        _ => {
            return Err(RtError::new(
                codes::TYPE,
                format!("`{name}` needs a `sql.Db`"),
            ))
        }
    };
    let Some(db) = handle.downcast_ref::<Db>() else {
        return Err(RtError::new(
            codes::TYPE,
            format!("`{name}` needs a `sql.Db`"),
        ));
    };
    match a.func {
        StdFn::DbClose => {
            db.conn.borrow_mut().take();
            Ok(Value::None)
        }
        StdFn::DbQuery => {
            let text = a.str(0)?.to_string();
            let params = params(&a, 1)?;
            let host = it.host();
            let r = host.effect(&a.effect(Kind::SqlRead, &text, &name), |s| {
                let guard = db.conn.borrow();
                let conn = guard.as_ref().ok_or("the database is closed")?;
                let rows = query(conn, &text, &params)?;
                s.observe(Observation::Rows(rows.rows.len() as u64));
                if s.is_observed() {
                    // A journal digests what the query saw, to notice a changed world on resume.
                    let seen = serde_json::to_vec(&rows.to_record()).unwrap_or_default();
                    s.observe(Observation::Read(&seen));
                }
                Ok(rows)
            })?;
            let rows = match r {
                Ok(r) => r,
                Err(why) => return Ok(err(why)),
            };
            let elem = match &a.expect {
                Ty::List(t) => (**t).clone(),
                _ => Ty::Any,
            };
            let as_tuple = matches!(elem, Ty::Tuple(_) | Ty::TupleOf(_) | Ty::List(_));
            if let Some(cols) = record_columns(it, &elem, &rows.cols) {
                return Ok(match read_records(it, &elem, &cols, rows.rows) {
                    Ok(v) => ok(Value::list(v)),
                    Err(why) => err(why),
                });
            }
            let mut out = Vec::with_capacity(rows.rows.len());
            for (i, row) in rows.rows.into_iter().enumerate() {
                let v = if as_tuple {
                    Value::tuple(row.into_iter().map(to_value).collect())
                } else {
                    let mut d = Dict::default();
                    for (c, x) in rows.cols.iter().zip(row) {
                        d.insert(Key(Value::str(c.as_str())), to_value(x));
                    }
                    Value::dict(d)
                };
                if elem.is_known() {
                    let mut path = format!("$[{i}]");
                    match it.narrow(v, &elem, &mut path, Lenience::IntBools) {
                        Ok(v) => out.push(v),
                        Err(why) => return Ok(err(why)),
                    }
                } else {
                    out.push(v);
                }
            }
            Ok(ok(Value::list(out)))
        }
        StdFn::DbExecute | StdFn::DbExecuteMany => {
            let text = a.str(0)?.to_string();
            let batches = if a.func == StdFn::DbExecute {
                vec![params(&a, 1)?]
            } else {
                let mut all = Vec::new();
                for (i, row) in a.list(1)?.iter().enumerate() {
                    all.push(to_params(row).map_err(|m| {
                        RtError::new(codes::TYPE, format!("`{name}`: row {i}: {m}"))
                    })?);
                }
                all
            };
            let host = it.host();
            let run = host.run_id.clone();
            let many = a.func == StdFn::DbExecuteMany;
            let r = host.effect(&a.effect(Kind::SqlWrite, &text, &name), |s| {
                let guard = db.conn.borrow();
                let conn = guard.as_ref().ok_or("the database is closed")?;
                let kind = statement_kind(&text);
                let check = match (kind, &db.file) {
                    (Statement::Control, _) | (_, None) => None,
                    (Statement::Outside, _) => Some(Check::Repeatable),
                    (Statement::Plain, Some(f)) => Some(Check::Sql { db: f.clone() }),
                };
                let done_as = check.is_none().then(|| serde_json::json!({ "ok": 0 }));
                let effect = s.intent(&Intent { check, done_as });
                let changed = match (kind, &effect) {
                    (Statement::Plain, Some(effect)) => in_transaction(conn, |c| {
                        let n = run_batches(c, &text, &batches)?;
                        record_sql(c, &run, effect, n).map_err(|e| sql_why(&e))?;
                        Ok(n)
                    })?,
                    (Statement::Plain, None) if many => {
                        in_transaction(conn, |c| run_batches(c, &text, &batches))?
                    }
                    _ => run_batches(conn, &text, &batches)?,
                };
                s.observe(Observation::Rows(changed));
                Ok(changed)
            })?;
            Ok(match r {
                Ok(n) => ok(Value::Int(n as i64)),
                Err(why) => err(why),
            })
        }
        _ => unreachable!("sql::call got {:?}", a.func),
    }
}

/// How a statement may be wrapped in a transaction of Kora's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Statement {
    /// Anything else: it commits with the row that says it happened.
    Plain,
    /// A PRAGMA, VACUUM, ATTACH or DETACH: SQLite refuses (or ignores) these inside a
    /// transaction, and doing one again is harmless.
    Outside,
    /// The program's own transaction control: what it committed is the program's to know.
    Control,
}

/// The statement's first keyword decides (after blanks and comments).
fn statement_kind(text: &str) -> Statement {
    let mut rest = text.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |x| x.1).trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |x| x.1).trim_start();
        } else {
            break;
        }
    }
    let word: String = rest
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "PRAGMA" | "VACUUM" | "ATTACH" | "DETACH" => Statement::Outside,
        "BEGIN" | "COMMIT" | "END" | "ROLLBACK" | "SAVEPOINT" | "RELEASE" => Statement::Control,
        _ => Statement::Plain,
    }
}

/// Runs `body` in a transaction (a savepoint inside the program's own), committing only if it succeeds.
fn in_transaction(
    conn: &rusqlite::Connection,
    body: impl FnOnce(&rusqlite::Connection) -> Result<u64, String>,
) -> Result<u64, String> {
    let nested = !conn.is_autocommit();
    let (begin, commit, undo) = if nested {
        (
            "SAVEPOINT kora_effect",
            "RELEASE kora_effect",
            "ROLLBACK TO kora_effect; RELEASE kora_effect",
        )
    } else {
        ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
    };
    conn.execute_batch(begin).map_err(|e| sql_why(&e))?;
    match body(conn).and_then(|n| {
        conn.execute_batch(commit)
            .map(|_| n)
            .map_err(|e| sql_why(&e))
    }) {
        Ok(n) => Ok(n),
        Err(why) => {
            let _ = conn.execute_batch(undo);
            Err(why)
        }
    }
}

/// Runs the statement once per parameter row; the rows changed in all.
fn run_batches(conn: &rusqlite::Connection, text: &str, batches: &[Params]) -> Result<u64, String> {
    let mut stmt = conn.prepare_cached(text).map_err(|e| sql_why(&e))?;
    let mut changed = 0u64;
    for p in batches {
        changed += match p {
            Params::Pos(v) => stmt.execute(rusqlite::params_from_iter(v.iter())),
            Params::Named(v) => {
                let refs: Vec<(&str, &dyn rusqlite::ToSql)> = v
                    .iter()
                    .map(|(k, x)| (k.as_str(), x as &dyn rusqlite::ToSql))
                    .collect();
                stmt.execute(refs.as_slice())
            }
        }
        .map_err(|e| sql_why(&e))? as u64;
    }
    Ok(changed)
}

/// For a record row type whose every field has a column: each field's column index.
fn record_columns(it: &Interp, elem: &Ty, cols: &[String]) -> Option<Vec<usize>> {
    let Ty::Record(id, _) = elem else {
        return None;
    };
    let rec = it.prog.record(*id);
    rec.fields
        .iter()
        .map(|f| cols.iter().position(|c| c == it.prog.name(f.name)))
        .collect()
}

/// Rows straight into records, column by column: no dict per row.
fn read_records(
    it: &mut Interp,
    elem: &Ty,
    cols: &[usize],
    rows: Vec<Vec<Sql>>,
) -> Result<Vec<Value>, String> {
    let Ty::Record(id, _) = elem else {
        return Err("not a record type".into());
    };
    let prog = it.prog.clone();
    let rec = prog.record(*id);
    let mut out = Vec::with_capacity(rows.len());
    let mut path = String::new();
    for (i, row) in rows.into_iter().enumerate() {
        let mut row: Vec<Value> = row.into_iter().map(to_value).collect();
        let mut fields = Vec::with_capacity(cols.len());
        for (f, &c) in rec.fields.iter().zip(cols) {
            let v = std::mem::take(&mut row[c]);
            if crate::value::conform::conforms(&prog, &v, &f.ty)
                && !matches!(f.ty, Ty::Float | Ty::Bool)
            {
                fields.push(v);
                continue;
            }
            path.clear();
            path.push_str(&format!("$[{i}].{}", prog.name(f.name)));
            fields.push(it.narrow(v, &f.ty, &mut path, Lenience::IntBools)?);
        }
        out.push(Value::Record(std::rc::Rc::new(crate::value::Record {
            ty: *id,
            fields: RefCell::new(fields),
        })));
    }
    Ok(out)
}

enum Params {
    Pos(Vec<Sql>),
    Named(Vec<(String, Sql)>),
}

fn params(a: &Args, i: usize) -> RtResult<Params> {
    match a.get(i) {
        None => Ok(Params::Pos(Vec::new())),
        Some(v) => {
            to_params(v).map_err(|m| RtError::new(codes::TYPE, format!("`{}`: {m}", a.name())))
        }
    }
}

fn to_params(v: &Value) -> Result<Params, String> {
    match v {
        Value::List(l) => l
            .borrow()
            .iter()
            .map(to_sql)
            .collect::<Result<_, _>>()
            .map(Params::Pos),
        Value::Tuple(t) => t
            .iter()
            .map(to_sql)
            .collect::<Result<_, _>>()
            .map(Params::Pos),
        Value::Dict(d) => {
            let mut out = Vec::new();
            for (k, x) in d.borrow().iter() {
                let Value::Str(k) = &k.0 else {
                    return Err("named parameters need `str` keys".into());
                };
                let k = k.as_str();
                let name = if k.starts_with([':', '@', '$']) {
                    k.to_string()
                } else {
                    format!(":{k}")
                };
                out.push((name, to_sql(x)?));
            }
            Ok(Params::Named(out))
        }
        other => Err(format!(
            "parameters are a list, a tuple or a dict, not a `{}`",
            other.type_name()
        )),
    }
}

fn to_sql(v: &Value) -> Result<Sql, String> {
    Ok(match v {
        Value::None => Sql::Null,
        Value::Bool(b) => Sql::Integer(*b as i64),
        Value::Int(i) => Sql::Integer(*i),
        Value::Float(f) => Sql::Real(*f),
        Value::Str(s) => Sql::Text(s.as_str().to_string()),
        Value::Native(n) => match n.downcast_ref::<jiff::ZonedDateTime>() {
            Some(z) => Sql::Text(super::time::iso(z)),
            None => return Err(format!("a `{}` cannot be a parameter", n.type_name())),
        },
        other => return Err(format!("a `{}` cannot be a parameter", other.type_name())),
    })
}

fn to_value(v: Sql) -> Value {
    match v {
        Sql::Null => Value::None,
        Sql::Integer(i) => Value::Int(i),
        Sql::Real(f) => Value::Float(f),
        Sql::Text(s) => Value::str(s),
        Sql::Blob(b) => Value::list(b.into_iter().map(|x| Value::Int(x as i64)).collect()),
    }
}

fn query(conn: &rusqlite::Connection, text: &str, p: &Params) -> Result<Rows, String> {
    let mut stmt = conn.prepare_cached(text).map_err(|e| sql_why(&e))?;
    let cols: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let n = cols.len();
    let collect = |row: &rusqlite::Row| -> rusqlite::Result<Vec<Sql>> {
        (0..n).map(|i| row.get_ref(i).map(owned)).collect()
    };
    let rows: rusqlite::Result<Vec<Vec<Sql>>> = match p {
        Params::Pos(v) => stmt
            .query_map(rusqlite::params_from_iter(v.iter()), collect)
            .and_then(|r| r.collect()),
        Params::Named(v) => {
            let refs: Vec<(&str, &dyn rusqlite::ToSql)> = v
                .iter()
                .map(|(k, x)| (k.as_str(), x as &dyn rusqlite::ToSql))
                .collect();
            stmt.query_map(refs.as_slice(), collect)
                .and_then(|r| r.collect())
        }
    };
    Ok(Rows {
        cols,
        rows: rows.map_err(|e| sql_why(&e))?,
    })
}

fn owned(v: ValueRef) -> Sql {
    match v {
        ValueRef::Null => Sql::Null,
        ValueRef::Integer(i) => Sql::Integer(i),
        ValueRef::Real(f) => Sql::Real(f),
        ValueRef::Text(t) => Sql::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Sql::Blob(b.to_vec()),
    }
}

fn sql_why(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => format!("SQLite: {m}"),
        other => format!("SQLite: {other}"),
    }
}
