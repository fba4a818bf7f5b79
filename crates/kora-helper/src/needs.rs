//! What a helper declares it needs (`[package.helper] needs`): nothing by default, `net`, `write`.

/// The rights a helper is granted beyond computing on what it is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Needs {
    pub net: bool,
    pub write: bool,
}

impl Needs {
    /// Reads the manifest's list; `Err` names the word that is not a need.
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Needs, String> {
        let mut n = Needs::default();
        for w in words {
            match w {
                "net" => n.net = true,
                "write" => n.write = true,
                other => {
                    return Err(format!(
                        "`{other}` is not something a helper can need: use `net` or `write`"
                    ))
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_means_nothing() {
        assert_eq!(Needs::parse([]).expect("parses"), Needs::default());
        assert!(Needs::parse(["net", "write"]).expect("parses").write);
        assert!(Needs::parse(["exec"]).is_err());
    }
}
