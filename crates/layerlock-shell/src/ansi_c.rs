//! Escapes of ANSI-C quoted strings (`$'a\tb'`).

/// Decodes the escape whose letter starts `rest` (the text just after the
/// backslash). Returns the text it stands for and how many characters of
/// `rest` it used; unknown escapes stand for themselves, backslash included.
pub(crate) fn decode(rest: &[char]) -> (String, usize) {
    let Some(&letter) = rest.first() else {
        return ("\\".to_string(), 0);
    };
    let simple = match letter {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'e' | 'E' => Some('\u{1b}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' | '\'' | '"' | '?' => Some(letter),
        _ => None,
    };
    if let Some(c) = simple {
        return (c.to_string(), 1);
    }
    match letter {
        'x' => numeric(rest, 1, 2, 16).unwrap_or_else(|| ("\\x".to_string(), 1)),
        'u' => numeric(rest, 1, 4, 16).unwrap_or_else(|| ("\\u".to_string(), 1)),
        'U' => numeric(rest, 1, 8, 16).unwrap_or_else(|| ("\\U".to_string(), 1)),
        '0'..='7' => numeric(rest, 0, 3, 8).unwrap_or_else(|| (letter.to_string(), 1)),
        'c' => match rest.get(1) {
            Some(&c) => {
                let code = u32::from(c) & 0x1f;
                (
                    char::from_u32(code).map(String::from).unwrap_or_default(),
                    2,
                )
            }
            None => ("\\c".to_string(), 1),
        },
        _ => (format!("\\{letter}"), 1),
    }
}

/// Up to `max` digits of `radix` from `rest[skip..]`, as one character.
fn numeric(rest: &[char], skip: usize, max: usize, radix: u32) -> Option<(String, usize)> {
    let digits: String = rest
        .iter()
        .skip(skip)
        .take(max)
        .take_while(|c| c.is_digit(radix))
        .collect();
    if digits.is_empty() {
        return None;
    }
    let code = u32::from_str_radix(&digits, radix).ok()?;
    // Octal escapes name a byte; out-of-range or surrogate codes give nothing.
    let code = if radix == 8 { code & 0xff } else { code };
    let text = char::from_u32(code).map(String::from).unwrap_or_default();
    Some((text, skip + digits.chars().count()))
}

#[cfg(test)]
mod tests {
    use super::decode;

    fn d(s: &str) -> (String, usize) {
        decode(&s.chars().collect::<Vec<_>>())
    }

    #[test]
    fn escapes() {
        assert_eq!(d("tb"), ("\t".to_string(), 1));
        assert_eq!(d("x41z"), ("A".to_string(), 3));
        assert_eq!(d("101"), ("A".to_string(), 3));
        assert_eq!(d("u00e9"), ("é".to_string(), 5));
        assert_eq!(d("q"), ("\\q".to_string(), 1));
        assert_eq!(d("xg"), ("\\x".to_string(), 1));
        assert_eq!(d(""), ("\\".to_string(), 0));
    }
}
