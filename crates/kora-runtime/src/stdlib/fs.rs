//! `fs`: files as results, not exceptions; paths relative to the program's folder; reads digested, writes world-changing and checkable.
//!
//! The defect fixed: Python's `open` raises, and a relative path means the
//! current directory, so a program behaves differently depending on where it
//! was started. Here every failure is an `Err` naming the path, and a relative
//! path is the program's own folder. Every write says, before it acts, how a
//! resume can tell whether it happened (`fs_write.rs` for `write` and `append`).

use std::path::Path;
use std::rc::Rc;

use kora_check::std_api::StdFn;

use super::image::Image;
use super::{outcome, str_list, Args, Native};
use crate::durable::effect::{Intent, Kind, Observation};
use crate::durable::journal::check::Check;
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let name = a.name();
    match a.func {
        StdFn::FsExists => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsRead, &p, &name), |_| Ok(full.exists()))?;
            Ok(Value::Bool(r.unwrap_or(false)))
        }
        StdFn::FsRead | StdFn::FsLines => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsRead, &p, &name), |s| {
                let text = std::fs::read_to_string(&full).map_err(|e| io_why(&p, &e))?;
                s.observe(Observation::Read(text.as_bytes()));
                Ok(text)
            })?;
            Ok(match a.func {
                StdFn::FsRead => outcome(r, Value::str),
                _ => outcome(r, |t| str_list(t.lines().map(str::to_string).collect())),
            })
        }
        StdFn::FsBytes => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsRead, &p, &name), |s| {
                let bytes = std::fs::read(&full).map_err(|e| io_why(&p, &e))?;
                s.observe(Observation::Read(&bytes));
                Ok(bytes)
            })?;
            Ok(outcome(r, crate::value::bytes::Bytes::value))
        }
        StdFn::FsImage => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsRead, &p, &name), |s| {
                let bytes = std::fs::read(&full).map_err(|e| io_why(&p, &e))?;
                s.observe(Observation::Read(&bytes));
                Image::from_bytes(&p, bytes)
            })?;
            Ok(outcome(r, |img| Value::Native(Rc::new(Native::new(img)))))
        }
        StdFn::ImageFormat | StdFn::ImageSize | StdFn::ImageWidth | StdFn::ImageHeight => {
            let Some(Value::Native(n)) = &a.recv else {
                return Err(RtError::new(codes::ATTRIBUTE, "not an `fs.Image`"));
            };
            let Some(img) = n.downcast_ref::<Image>() else {
                return Err(RtError::new(codes::ATTRIBUTE, "not an `fs.Image`"));
            };
            let (w, h) = img.data.dimensions().unwrap_or((0, 0));
            Ok(match a.func {
                StdFn::ImageFormat => Value::str(img.format()),
                StdFn::ImageWidth => Value::Int(w as i64),
                StdFn::ImageHeight => Value::Int(h as i64),
                _ => Value::Int(img.data.bytes.len() as i64),
            })
        }
        StdFn::FsWrite | StdFn::FsAppend => {
            let p = a.str(0)?.to_string();
            let text = a.str(1)?.to_string();
            let append = a.func == StdFn::FsAppend;
            let host = it.host();
            let full = host.resolve(&p);
            let durable = host.durable;
            let r = host.effect(&a.effect(Kind::FsWrite, &p, &name), |s| {
                if append {
                    super::fs_write::append(s, &p, &full, text.as_bytes(), durable)
                } else {
                    super::fs_write::write_whole(s, &p, &full, text.as_bytes(), durable)
                }
            })?;
            Ok(outcome(r, |_| Value::None))
        }
        StdFn::FsRemove => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsWrite, &p, &name), |s| {
                s.intent(&Intent {
                    check: Some(Check::Removed {
                        path: full.to_string_lossy().into_owned(),
                    }),
                    done_as: None,
                });
                let res = if full.is_dir() {
                    std::fs::remove_dir(&full)
                } else {
                    std::fs::remove_file(&full)
                };
                res.map_err(|e| io_why(&p, &e))
            })?;
            Ok(outcome(r, |_| Value::None))
        }
        StdFn::FsMkdir => {
            let p = a.str(0)?.to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsWrite, &p, &name), |s| {
                s.intent(&Intent {
                    check: Some(Check::Folder {
                        path: full.to_string_lossy().into_owned(),
                    }),
                    done_as: None,
                });
                std::fs::create_dir_all(&full).map_err(|e| io_why(&p, &e))
            })?;
            Ok(outcome(r, |_| Value::None))
        }
        StdFn::FsList => {
            let p = a.opt_str(0)?.unwrap_or(".").to_string();
            let host = it.host();
            let full = host.resolve(&p);
            let r = host.effect(&a.effect(Kind::FsRead, &p, &name), |s| {
                let mut names = Vec::new();
                for e in std::fs::read_dir(&full).map_err(|e| io_why(&p, &e))? {
                    let e = e.map_err(|e| io_why(&p, &e))?;
                    names.push(e.file_name().to_string_lossy().into_owned());
                }
                names.sort();
                s.observe(Observation::Read(names.join("\n").as_bytes()));
                Ok(names)
            })?;
            Ok(outcome(r, str_list))
        }
        StdFn::FsGlob => {
            let pattern = a.str(0)?.to_string();
            let host = it.host();
            let base = host.base_dir.clone();
            let absolute = Path::new(&pattern).is_absolute();
            let full = host.resolve(&pattern).to_string_lossy().into_owned();
            let r = host.effect(&a.effect(Kind::FsRead, &pattern, &name), |s| {
                let paths = glob::glob(&full)
                    .map_err(|e| format!("bad glob pattern {pattern:?}: {}", e.msg))?;
                let mut out = Vec::new();
                for p in paths {
                    let p = p.map_err(|e| io_why(&e.path().to_string_lossy(), e.error()))?;
                    let shown = if absolute {
                        p.as_path()
                    } else {
                        p.strip_prefix(&base).unwrap_or(&p)
                    };
                    out.push(shown.to_string_lossy().replace('\\', "/"));
                }
                out.sort();
                s.observe(Observation::Read(out.join("\n").as_bytes()));
                Ok(out)
            })?;
            Ok(outcome(r, str_list))
        }
        _ => unreachable!("fs::call got {:?}", a.func),
    }
}

/// "cannot read `data.csv`: No such file or directory": the path as the program wrote it.
pub(super) fn io_why(path: &str, e: &std::io::Error) -> String {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "not found".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::InvalidData => "not valid UTF-8 text".to_string(),
        _ => e.to_string(),
    };
    format!("`{path}`: {what}")
}
