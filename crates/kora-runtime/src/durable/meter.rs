//! The meters a budget counts: what an observer names when it answers `Exhausted`.

/// One meter of a budget, in the order exhaustion is reported: time first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Meter {
    Time,
    Tokens,
    Calls,
    Steps,
}

impl Meter {
    /// The name `Exhausted(meter)` carries.
    pub fn name(self) -> &'static str {
        match self {
            Meter::Time => "time",
            Meter::Tokens => "tokens",
            Meter::Calls => "calls",
            Meter::Steps => "steps",
        }
    }

    /// The argument of `budget(...)` that sets this meter.
    pub fn keyword(self) -> &'static str {
        match self {
            Meter::Time => "max_seconds",
            Meter::Tokens => "max_tokens",
            Meter::Calls => "max_calls",
            Meter::Steps => "max_steps",
        }
    }

    /// What `remaining(...)` accepts: the meter's name, and `"seconds"` for time.
    pub fn parse(name: &str) -> Option<Meter> {
        match name {
            "time" | "seconds" => Some(Meter::Time),
            "tokens" => Some(Meter::Tokens),
            "calls" => Some(Meter::Calls),
            "steps" => Some(Meter::Steps),
            _ => None,
        }
    }
}
