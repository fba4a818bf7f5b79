//! "Did you mean" suggestions: the closest known name by edit distance.

/// The candidate closest to `name`, if it is close enough to be a likely typo.
/// The help line for a name that is not among `known`: the closest one, or the list of all
/// (`what` names them, e.g. "arguments").
pub fn did_you_mean_or_list(name: &str, known: &[&str], what: &str) -> String {
    match closest(name, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("its {what} are: {}", known.join(", ")),
    }
}

pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.starts_with('<') {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters, with a transposition counted as one edit.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_not_strangers() {
        assert_eq!(closest("totl", ["total", "count"]), Some("total"));
        assert_eq!(closest("lenght", ["len", "length"]), Some("length"));
        assert_eq!(closest("xyz", ["total", "count"]), None);
    }
}
