//! How literals are spelled: string prefixes and quotes (Black's rule: the preferred
//! quote unless the other needs fewer escapes) and number prefixes and exponents.
//!
//! A literal's value never changes: escapes are only added or removed for the
//! quote characters themselves, and a raw string, an f-string or a triple-quoted
//! string switches quotes only when its body holds none of the new quote.

use kora_syntax::lexer::split_literal;

use crate::options::QuoteStyle;

fn other(q: char) -> char {
    if q == '"' {
        '\''
    } else {
        '"'
    }
}

/// The body of a plain single-line string written between `t` quotes: escapes of `t`
/// kept or added, needless escapes of the other quote removed. Returns the body and
/// how many escaped quotes it holds.
fn requote(body: &str, t: char) -> (String, usize) {
    let o = other(t);
    let mut out = String::with_capacity(body.len() + 2);
    let mut escapes = 0;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(x) if x == o => out.push(o),
                Some(x) => {
                    out.push('\\');
                    out.push(x);
                    if x == t {
                        escapes += 1;
                    }
                }
                None => out.push('\\'),
            }
        } else if c == t {
            out.push('\\');
            out.push(t);
            escapes += 1;
        } else {
            out.push(c);
        }
    }
    (out, escapes)
}

/// A string or f-string token as it is printed.
pub fn normalize_string(raw: &str, style: QuoteStyle) -> String {
    let parts = split_literal(raw);
    if !parts.terminated || parts.bytes {
        return raw.to_string();
    }
    let prefix: String = raw[..parts.prefix_len]
        .chars()
        .filter(|c| !matches!(c, 'u' | 'U'))
        .map(|c| if c == 'F' { 'f' } else { c })
        .collect();
    let q = raw[parts.prefix_len..].chars().next().unwrap_or('"');
    let body = &raw[parts.body.clone()];
    let quotes = |c: char| c.to_string().repeat(parts.quote_len);
    let build = |c: char, b: &str| format!("{prefix}{}{b}{}", quotes(c), quotes(c));
    let preferred = match style {
        QuoteStyle::Double => '"',
        QuoteStyle::Single => '\'',
        QuoteStyle::Preserve => q,
    };
    let verbatim = parts.raw || parts.fmt || parts.quote_len == 3;
    if verbatim {
        let switch = preferred != q
            && !body.contains(preferred)
            && !(parts.fmt && body.contains('\\'))
            && !(parts.quote_len == 3 && body.ends_with('\\'));
        return build(if switch { preferred } else { q }, body);
    }
    if style == QuoteStyle::Preserve {
        return build(q, &requote(body, q).0);
    }
    let (pref_body, pref_escapes) = requote(body, preferred);
    let alt = other(preferred);
    let (alt_body, alt_escapes) = requote(body, alt);
    if alt_escapes < pref_escapes {
        build(alt, &alt_body)
    } else {
        build(preferred, &pref_body)
    }
}

/// A number token as it is printed: lower-case prefix and exponent, upper-case hex digits.
pub fn normalize_number(raw: &str) -> String {
    let lower = raw.to_ascii_lowercase();
    if let Some(digits) = lower.strip_prefix("0x") {
        return format!("0x{}", digits.to_ascii_uppercase());
    }
    if lower.starts_with("0o") || lower.starts_with("0b") {
        return lower;
    }
    // Black's spelling of a decimal: `0.5` not `.5`, `5.0` not `5.`, `1e5` not `1E+5`.
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, x)) => (m, Some(x.strip_prefix('+').unwrap_or(x))),
        None => (lower.as_str(), None),
    };
    let mantissa = match mantissa.split_once('.') {
        Some((whole, frac)) => format!(
            "{}.{}",
            if whole.is_empty() { "0" } else { whole },
            if frac.is_empty() { "0" } else { frac }
        ),
        None => mantissa.to_string(),
    };
    match exponent {
        Some(x) => format!("{mantissa}e{x}"),
        None => mantissa,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kora_syntax::lexer::decode_string;

    fn n(raw: &str) -> String {
        normalize_string(raw, QuoteStyle::Double)
    }

    #[test]
    fn prefers_double_quotes_without_more_escapes() {
        assert_eq!(n("'a'"), "\"a\"");
        assert_eq!(n("'it\\'s'"), "\"it's\"");
        assert_eq!(n("'say \"hi\"'"), "'say \"hi\"'");
        assert_eq!(n("\"say \\\"hi\\\" it\\'s\""), "'say \"hi\" it\\'s'");
        assert_eq!(n("\"don\\'t\""), "\"don't\"");
    }

    #[test]
    fn raw_f_and_triple_strings_switch_only_when_safe() {
        assert_eq!(n("r'\\d+'"), "r\"\\d+\"");
        assert_eq!(n("r'a\"b'"), "r'a\"b'");
        assert_eq!(n("f'{x}'"), "f\"{x}\"");
        assert_eq!(n("f'{d[\"k\"]}'"), "f'{d[\"k\"]}'");
        assert_eq!(n("F'{x}'"), "f\"{x}\"");
        assert_eq!(n("'''a\nb'''"), "\"\"\"a\nb\"\"\"");
        assert_eq!(n("'''a\"b'''"), "'''a\"b'''");
        assert_eq!(n("u'x'"), "\"x\"");
        assert_eq!(n("R'x'"), "R\"x\"");
    }

    #[test]
    fn values_never_change() {
        for raw in [
            "'a\\\\'",
            "'\\\\\\''",
            "'\"'",
            "\"'\"",
            "'\\n\\t\"\\''",
            "'x\\\"y'",
        ] {
            let out = n(raw);
            assert_eq!(decode_string(&out), decode_string(raw), "{raw} -> {out}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(normalize_number("0XABcd"), "0xABCD");
        assert_eq!(normalize_number("0O17"), "0o17");
        assert_eq!(normalize_number("1E5"), "1e5");
        assert_eq!(normalize_number("1_000"), "1_000");
        assert_eq!(normalize_number(".5"), "0.5");
        assert_eq!(normalize_number("5."), "5.0");
        assert_eq!(normalize_number("2.5E+3"), "2.5e3");
        assert_eq!(normalize_number("1e-9"), "1e-9");
    }
}
