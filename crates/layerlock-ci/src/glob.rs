//! Shell-style patterns: `*`, `?` and `[…]` classes.

/// fnmatch: `*`, `?` and `[…]` classes; `*` also crosses `/`, as Python's
/// fnmatch does.
pub fn fnmatch(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == '[' {
            if let Some(end) = p[pi + 1..]
                .iter()
                .position(|c| *c == ']')
                .map(|e| pi + 1 + e)
            {
                let class = &p[pi + 1..end];
                let (negate, class) = match class.first() {
                    Some('!') => (true, &class[1..]),
                    _ => (false, class),
                };
                let mut hit = false;
                let mut k = 0;
                while k < class.len() {
                    if k + 2 < class.len() && class[k + 1] == '-' {
                        hit |= class[k] <= t[ti] && t[ti] <= class[k + 2];
                        k += 3;
                    } else {
                        hit |= class[k] == t[ti];
                        k += 1;
                    }
                }
                if hit != negate {
                    pi = end + 1;
                    ti += 1;
                    continue;
                }
            }
        } else if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
            continue;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
            continue;
        }
        match star {
            Some(s) => {
                pi = s + 1;
                mark += 1;
                ti = mark;
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// A glob on one path segment or a whole path: as [`fnmatch`], but `*` and
/// `?` do not cross `/` (how the shell expands `tests/test_*.py`).
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let t: Vec<&str> = text.split('/').collect();
    p.len() == t.len() && p.iter().zip(&t).all(|(p, t)| fnmatch(p, t))
}

/// Does the word hold glob characters the shell would expand?
pub fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}
