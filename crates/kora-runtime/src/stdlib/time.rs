//! `time`: aware datetimes only, `now()` as a journaled effect, durations as seconds, strftime formatting and parsing.
//!
//! The defect fixed: Python's naive `datetime.now()` silently means "the
//! machine's zone", and `now()` outside a journal makes a replay disagree
//! with the original run. Every `time.DateTime` here carries its zone; text
//! without an offset is refused unless `tz=` says where it is.

use std::rc::Rc;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ZonedDateTime};

use std::cmp::Ordering;

use kora_check::std_api::{StdFn, StdType};

use super::{err, ok, Args, Native};
use crate::durable::effect::{Kind, Observation, Recordable};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::native::NativeObject;
use crate::value::Value;

impl NativeObject for ZonedDateTime {
    fn std_type(&self) -> StdType {
        StdType::DateTime
    }

    fn repr(&self, out: &mut String) {
        out.push_str(&format!("time.DateTime('{}')", iso(self)));
    }

    fn to_str(&self, out: &mut String) {
        out.push_str(&python_str(self));
    }

    /// Datetimes order by instant.
    fn compare(&self, other: &Native) -> Option<Ordering> {
        let other = other.downcast_ref::<ZonedDateTime>()?;
        Some(self.timestamp().cmp(&other.timestamp()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn dt(z: ZonedDateTime) -> Value {
    Value::Native(Rc::new(Native::new(z)))
}

/// RFC 3339 text, as Python's `isoformat()`.
pub fn iso(z: &ZonedDateTime) -> String {
    stamp(z, 'T')
}

/// Python's `str(datetime)`: a space between date and time.
pub fn python_str(z: &ZonedDateTime) -> String {
    stamp(z, ' ')
}

fn stamp(z: &ZonedDateTime, sep: char) -> String {
    let micros = z.subsec_nanosecond() / 1000;
    let frac = if micros == 0 {
        String::new()
    } else {
        format!(".{micros:06}")
    };
    let offset = z.offset().seconds();
    let sign = if offset < 0 { '-' } else { '+' };
    let o = offset.unsigned_abs();
    format!(
        "{:04}-{:02}-{:02}{sep}{:02}:{:02}:{:02}{frac}{sign}{:02}:{:02}",
        z.year(),
        z.month(),
        z.day(),
        z.hour(),
        z.minute(),
        z.second(),
        o / 3600,
        (o % 3600) / 60
    )
}

/// A clock reading crosses the pipeline as nanoseconds since 1970.
struct Reading(Timestamp);

impl Recordable for Reading {
    fn to_record(&self) -> serde_json::Value {
        serde_json::Value::String(self.0.as_nanosecond().to_string())
    }
    fn from_record(j: &serde_json::Value) -> Option<Reading> {
        let n: i128 = j.as_str()?.parse().ok()?;
        Timestamp::from_nanosecond(n).ok().map(Reading)
    }
}

fn zone(name: &str) -> Result<TimeZone, String> {
    if name.eq_ignore_ascii_case("utc") || name == "Z" {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(name).map_err(|_| {
        format!(
            "unknown time zone {name:?} (use an IANA name such as \"Europe/Paris\", or \"UTC\")"
        )
    })
}

fn this(a: &Args) -> RtResult<&ZonedDateTime> {
    match &a.recv {
        Some(Value::Native(n)) => match n.downcast_ref::<ZonedDateTime>() {
            Some(z) => Ok(z),
            None => Err(RtError::new(
                codes::TYPE,
                format!("`{}` needs a `time.DateTime`", a.name()),
            )),
        },
        _ => Err(RtError::new(
            codes::TYPE,
            format!("`{}` needs a `time.DateTime`", a.name()),
        )),
    }
}

fn seconds(f: f64, what: &str) -> RtResult<SignedDuration> {
    SignedDuration::try_from_secs_f64(f).map_err(|_| {
        RtError::new(
            codes::STD_VALUE,
            format!("`{what}`: {f} seconds is not a duration"),
        )
    })
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let name = a.name();
    match a.func {
        StdFn::TimeNow => {
            let host = it.host();
            let r = host.effect(&a.effect(Kind::Clock, "clock", &name), |s| {
                let now = Timestamp::now();
                s.observe(Observation::Value);
                Ok(Reading(now))
            })?;
            let ts = r.map_err(|why| RtError::new(codes::IO, why))?.0;
            Ok(dt(ts.to_zoned_datetime(TimeZone::UTC)))
        }
        StdFn::TimeSleep => {
            let secs = a.float(0, 0.0)?;
            if !(0.0..=86_400.0 * 365.0).contains(&secs) {
                return Err(RtError::new(
                    codes::STD_VALUE,
                    format!("`time.sleep`: {secs} is not a number of seconds to wait"),
                ));
            }
            let _ = it.flush_out();
            let host = it.host();
            host.effect(&a.effect(Kind::Sleep, "clock", &name), |_| {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                Ok(())
            })?
            .map_err(|why| RtError::new(codes::IO, why))?;
            Ok(Value::None)
        }
        StdFn::TimeSeconds => Ok(Value::Float(a.float(0, 0.0)?)),
        StdFn::TimeMinutes => Ok(Value::Float(a.float(0, 0.0)? * 60.0)),
        StdFn::TimeHours => Ok(Value::Float(a.float(0, 0.0)? * 3600.0)),
        StdFn::TimeDays => Ok(Value::Float(a.float(0, 0.0)? * 86400.0)),
        StdFn::TimeFromTimestamp => {
            let secs = a.float(0, 0.0)?;
            let d = seconds(secs, &name)?;
            let ts = Timestamp::from_duration(d).map_err(|_| {
                RtError::new(
                    codes::STD_VALUE,
                    format!("`{name}`: {secs} is out of range"),
                )
            })?;
            Ok(dt(ts.to_zoned_datetime(TimeZone::UTC)))
        }
        StdFn::TimeDatetime => {
            let part = |i: usize, d: i64| a.int(i, d);
            let (y, mo, d, h, mi, s) = (
                part(0, 0)?,
                part(1, 0)?,
                part(2, 0)?,
                part(3, 0)?,
                part(4, 0)?,
                part(5, 0)?,
            );
            let tz = a.opt_str(6)?.unwrap_or("UTC");
            let r = (|| {
                let small = |v: i64, what: &str| {
                    i8::try_from(v).map_err(|_| format!("{what} {v} is out of range"))
                };
                let year = i16::try_from(y).map_err(|_| format!("year {y} is out of range"))?;
                let date = jiff::civil::Date::new(year, small(mo, "month")?, small(d, "day")?)
                    .map_err(|e| e.to_string())?;
                let time = jiff::civil::Time::new(
                    small(h, "hour")?,
                    small(mi, "minute")?,
                    small(s, "second")?,
                    0,
                )
                .map_err(|e| e.to_string())?;
                let tz = zone(tz)?;
                date.to_datetime(time)
                    .to_zoned_datetime(tz)
                    .map_err(|e| e.to_string())
            })();
            Ok(match r {
                Ok(z) => ok(dt(z)),
                Err(why) => err(why),
            })
        }
        StdFn::TimeParse => {
            let text = a.str(0)?;
            let format = a.opt_str(1)?;
            let tz = a.opt_str(2)?;
            Ok(match parse(text, format, tz) {
                Ok(z) => ok(dt(z)),
                Err(why) => err(why),
            })
        }
        StdFn::DtFormat => {
            let z = this(&a)?;
            let fmt = a.str(0)?;
            let mut out = String::new();
            use std::fmt::Write;
            write!(out, "{}", z.strftime(fmt)).map_err(|_| {
                RtError::new(
                    codes::STD_VALUE,
                    format!("`format`: {fmt:?} is not a valid format for this datetime"),
                )
            })?;
            Ok(Value::str(out))
        }
        StdFn::DtIso => Ok(Value::str(iso(this(&a)?))),
        StdFn::DtTimestamp => {
            let z = this(&a)?;
            Ok(Value::Float(z.timestamp().as_nanosecond() as f64 / 1e9))
        }
        StdFn::DtToZone => {
            let z = this(&a)?;
            Ok(match zone(a.str(0)?) {
                Ok(tz) => ok(dt(z.with_time_zone(tz))),
                Err(why) => err(why),
            })
        }
        StdFn::DtAdd => {
            let z = this(&a)?;
            let d = seconds(a.float(0, 0.0)?, "add")?;
            let later = z.checked_add(d).map_err(|_| {
                RtError::new(
                    codes::STD_VALUE,
                    "`add`: the result is out of the representable range",
                )
            })?;
            Ok(dt(later))
        }
        StdFn::DtSince => {
            let z = this(&a)?;
            let other = match a.get(0) {
                Some(Value::Native(n)) => match n.downcast_ref::<ZonedDateTime>() {
                    Some(o) => o.timestamp(),
                    None => {
                        return Err(RtError::new(codes::TYPE, "`since` needs a `time.DateTime`"))
                    }
                },
                _ => return Err(RtError::new(codes::TYPE, "`since` needs a `time.DateTime`")),
            };
            let d = z.timestamp().as_nanosecond() - other.as_nanosecond();
            Ok(Value::Float(d as f64 / 1e9))
        }
        StdFn::DtYear => Ok(Value::Int(this(&a)?.year() as i64)),
        StdFn::DtMonth => Ok(Value::Int(this(&a)?.month() as i64)),
        StdFn::DtDay => Ok(Value::Int(this(&a)?.day() as i64)),
        StdFn::DtHour => Ok(Value::Int(this(&a)?.hour() as i64)),
        StdFn::DtMinute => Ok(Value::Int(this(&a)?.minute() as i64)),
        StdFn::DtSecond => Ok(Value::Int(this(&a)?.second() as i64)),
        // Python's `weekday()`: Monday is 0.
        StdFn::DtWeekday => Ok(Value::Int(
            this(&a)?.weekday().to_monday_zero_offset() as i64
        )),
        StdFn::DtZone => {
            let z = this(&a)?;
            let name = match z.time_zone().iana_name() {
                Some(n) => n.to_string(),
                None => {
                    let s = stamp(z, 'T');
                    s[s.len() - 6..].to_string()
                }
            };
            Ok(Value::str(name))
        }
        _ => unreachable!("time::call got {:?}", a.func),
    }
}

const NAIVE: &str = "has no UTC offset, and Kora datetimes are aware: pass `tz=\"UTC\"` (or a zone name) to say where it is";

fn parse(text: &str, format: Option<&str>, tz: Option<&str>) -> Result<ZonedDateTime, String> {
    let tz = tz.map(zone).transpose()?;
    let t = text.trim();
    if let Some(fmt) = format {
        let bdt = jiff::fmt::strtime::parse(fmt, t)
            .map_err(|e| format!("{t:?} does not match {fmt:?}: {e}"))?;
        if bdt.offset().is_some() || bdt.iana_time_zone().is_some() {
            return bdt.to_zoned_datetime().map_err(|e| e.to_string());
        }
        let Some(tz) = tz else {
            return Err(format!("{t:?} {NAIVE}"));
        };
        let civil = match bdt.to_datetime() {
            Ok(d) => d,
            Err(_) => bdt
                .to_date()
                .map_err(|e| e.to_string())?
                .to_datetime(jiff::civil::Time::midnight()),
        };
        return civil.to_zoned_datetime(tz).map_err(|e| e.to_string());
    }
    if let Ok(z) = t.parse::<ZonedDateTime>() {
        return Ok(z);
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(bdt) = jiff::fmt::strtime::parse(fmt, t) {
            if let Ok(z) = bdt.to_zoned_datetime() {
                return Ok(z);
            }
        }
    }
    if let Ok(ts) = t.parse::<Timestamp>() {
        return Ok(ts.to_zoned_datetime(tz.unwrap_or(TimeZone::UTC)));
    }
    let civil = t
        .parse::<jiff::civil::DateTime>()
        .or_else(|_| t.parse::<jiff::civil::Date>().map(|d| d.to_datetime(jiff::civil::Time::midnight())))
        .map_err(|_| format!("{t:?} is not an ISO 8601 / RFC 3339 datetime; pass `format=` to read another layout"))?;
    match tz {
        Some(tz) => civil.to_zoned_datetime(tz).map_err(|e| e.to_string()),
        None => Err(format!("{t:?} {NAIVE}")),
    }
}
