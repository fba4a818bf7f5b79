//! Decimal text of an `int`, written without the formatting machinery.
//!
//! `write!(out, "{i}")` goes through `core::fmt`'s dynamic dispatch and padding logic:
//! about two hundred instructions for a small number, and `str(n)` and f-string fields
//! print ints in every loop that builds text. Two digits per step from a table is the
//! usual way; the output is byte for byte what `Display` writes.

const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `n` (no sign) to `out`.
pub fn push_u64(out: &mut String, mut n: u64) {
    // u64::MAX has 20 digits.
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    while n >= 100 {
        let k = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at] = PAIRS[k];
        buf[at + 1] = PAIRS[k + 1];
    }
    if n >= 10 {
        let k = n as usize * 2;
        at -= 2;
        buf[at] = PAIRS[k];
        buf[at + 1] = PAIRS[k + 1];
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    for &b in &buf[at..] {
        out.push(b as char);
    }
}

/// Appends `i` as `Display` would: a `-` for negatives, then the digits.
pub fn push_int(out: &mut String, i: i64) {
    if i < 0 {
        out.push('-');
    }
    push_u64(out, i.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_display_at_every_width_and_the_extremes() {
        let mut cases = vec![0, 1, -1, 9, 10, 99, 100, 101, -100, i64::MAX, i64::MIN];
        let mut p: i64 = 1;
        for _ in 0..18 {
            p *= 10;
            cases.extend([p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]);
        }
        for i in cases {
            let mut s = String::from("x");
            push_int(&mut s, i);
            assert_eq!(s, format!("x{i}"), "{i}");
        }
        let mut s = String::new();
        push_u64(&mut s, u64::MAX);
        assert_eq!(s, u64::MAX.to_string());
    }
}
