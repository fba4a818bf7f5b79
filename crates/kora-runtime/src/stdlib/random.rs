//! `random`: draws as journaled effects, so a durable replay sees the same numbers; `seed` makes a run repeatable.
//!
//! The defect fixed: Python's `random` is invisible nondeterminism; a
//! replayed run would silently take different branches. Each draw here
//! passes the effect pipeline, where a journal records and replays it. The
//! generator is fastrand's wyrand: fast and well distributed, not for secrets.

use kora_check::std_api::StdFn;

use super::Args;
use crate::durable::effect::{Kind, Observation, Recordable};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

/// One draw through the pipeline, so a journal can replay it.
fn draw<T: Recordable>(
    it: &mut Interp,
    a: &Args,
    f: impl FnOnce(&mut fastrand::Rng) -> T,
) -> RtResult<T> {
    let call = a.name();
    let host = it.host();
    let mut rng = host.rng.clone();
    let r = host.effect(&a.effect(Kind::Random, "rng", &call), |s| {
        let v = f(&mut rng);
        s.observe(Observation::Value);
        Ok(v)
    })?;
    host.rng = rng;
    r.map_err(|why| RtError::new(codes::STD_VALUE, why))
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    match a.func {
        StdFn::RandomRandom => Ok(Value::Float(draw(it, &a, |r| r.f64())?)),
        StdFn::RandomUniform => {
            let (lo, hi) = (a.float(0, 0.0)?, a.float(1, 1.0)?);
            Ok(Value::Float(draw(it, &a, |r| lo + (hi - lo) * r.f64())?))
        }
        StdFn::RandomRandint => {
            let (lo, hi) = (a.int(0, 0)?, a.int(1, 0)?);
            if lo > hi {
                return Err(RtError::new(
                    codes::STD_VALUE,
                    format!("`random.randint({lo}, {hi})`: the range is empty"),
                ));
            }
            Ok(Value::Int(draw(it, &a, |r| r.i64(lo..=hi))?))
        }
        StdFn::RandomChoice => {
            let items = a.list(0)?;
            if items.is_empty() {
                return Err(RtError::new(
                    codes::STD_VALUE,
                    "`random.choice` of an empty list",
                ));
            }
            let n = items.len() as u64;
            let i = draw(it, &a, |r| r.u64(..n))?;
            Ok(items[i as usize].clone())
        }
        StdFn::RandomShuffle => {
            let Some(Value::List(l)) = a.get(0) else {
                return Err(RtError::new(codes::TYPE, "`random.shuffle` needs a list"));
            };
            let n = l.borrow().len();
            // The permutation is what is drawn (and journaled), not the shuffled values.
            let order: Vec<u64> = draw(it, &a, |r| {
                let mut idx: Vec<u64> = (0..n as u64).collect();
                r.shuffle(&mut idx);
                idx
            })?;
            let old = l.borrow().clone();
            let mut new = Vec::with_capacity(n);
            for i in order {
                match old.get(i as usize) {
                    Some(v) => new.push(v.clone()),
                    None => {
                        return Err(RtError::new(
                            codes::EFFECT_REFUSED,
                            "a replayed shuffle does not fit this list",
                        ))
                    }
                }
            }
            **l.borrow_mut() = new;
            Ok(Value::None)
        }
        StdFn::RandomSample => {
            let items = a.list(0)?;
            let k = a.int(1, 0)?;
            if k < 0 || k as usize > items.len() {
                return Err(RtError::new(
                    codes::STD_VALUE,
                    format!("`random.sample`: cannot take {k} of {} items", items.len()),
                ));
            }
            let n = items.len();
            let picked: Vec<u64> = draw(it, &a, |r| {
                let mut idx: Vec<u64> = (0..n as u64).collect();
                // A partial Fisher-Yates: the first k positions are the sample.
                for i in 0..k as usize {
                    let j = r.usize(i..n);
                    idx.swap(i, j);
                }
                idx.truncate(k as usize);
                idx
            })?;
            let mut out = Vec::with_capacity(picked.len());
            for i in picked {
                match items.get(i as usize) {
                    Some(v) => out.push(v.clone()),
                    None => {
                        return Err(RtError::new(
                            codes::EFFECT_REFUSED,
                            "a replayed sample does not fit this list",
                        ))
                    }
                }
            }
            Ok(Value::list(out))
        }
        StdFn::RandomSeed => {
            let n = a.int(0, 0)?;
            let _: () = draw(it, &a, |_| ())?;
            it.host().rng = fastrand::Rng::with_seed(n as u64);
            Ok(Value::None)
        }
        _ => unreachable!("random::call got {:?}", a.func),
    }
}
