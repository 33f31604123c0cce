//! Bash arrays a script builds and then runs as a command: `args=(uv run
//! --group tests)`, `args+=(pytest -q)`, then `"${args[@]}"`. Elements
//! known when the script is read are kept; computed ones are `None`.

use std::collections::BTreeMap;

/// The arrays a script has set so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct Arrays {
    values: BTreeMap<String, Vec<Element>>,
}

/// One element: its value when known, and where its assignment is written
/// (a command run from the array is reported where it was written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    pub(crate) value: Option<String>,
    pub(crate) at: (usize, usize),
}

/// At most this many elements are kept for one array: a loop appending to
/// one does not grow it without bound.
const MAX_ELEMENTS: usize = 4096;

impl Arrays {
    /// `NAME=(…)` or `NAME+=(…)` (`raw` is the value as written, with its
    /// parentheses). Anything else is not an array assignment: `false`.
    pub(crate) fn assign(
        &mut self,
        name: &str,
        raw: &str,
        append: bool,
        at: (usize, usize),
    ) -> bool {
        let Some(inner) = raw.strip_prefix('(').and_then(|r| r.strip_suffix(')')) else {
            return false;
        };
        let elements = elements(inner)
            .into_iter()
            .map(|value| Element { value, at });
        let entry = self.values.entry(name.to_string()).or_default();
        if !append {
            entry.clear();
        }
        entry.extend(elements);
        entry.truncate(MAX_ELEMENTS);
        true
    }

    /// `NAME[i]=value` (`name` as written, with its subscript): that
    /// element changes. An index not known makes every element unknown. A
    /// name that is no array known here is `false`.
    pub(crate) fn assign_element(
        &mut self,
        name: &str,
        value: Option<String>,
        at: (usize, usize),
    ) -> bool {
        let Some((base, rest)) = name.split_once('[') else {
            return false;
        };
        let Some(elements) = self.values.get_mut(base) else {
            return false;
        };
        match rest.trim_end_matches(']').parse::<usize>() {
            Ok(index) if index < MAX_ELEMENTS => {
                if elements.len() <= index {
                    elements.resize(index + 1, Element { value: None, at });
                }
                elements[index] = Element { value, at };
            }
            _ => elements.iter_mut().for_each(|e| e.value = None),
        }
        true
    }

    /// The elements of array `name`, if it is one.
    pub(crate) fn get(&self, name: &str) -> Option<&Vec<Element>> {
        self.values.get(name)
    }

    /// Make `name` these elements, or no array.
    pub(crate) fn set(&mut self, name: &str, elements: Option<Vec<Element>>) {
        match elements {
            Some(elements) => self.values.insert(name.to_string(), elements),
            None => self.values.remove(name),
        };
    }

    /// The name of the array `raw` expands whole (`"${NAME[@]}"`), if it
    /// is one.
    pub(crate) fn expanded_name(raw: &str) -> Option<&str> {
        let text = raw.trim_matches('"');
        text.strip_prefix("${")?
            .strip_suffix("[@]}")
            .or_else(|| text.strip_prefix("${")?.strip_suffix("[*]}"))
    }

    /// The elements `"${NAME[@]}"` (or `${NAME[*]}`) stands for, when `raw`
    /// is one and the array is known.
    pub(crate) fn expand(&self, raw: &str) -> Option<&[Element]> {
        let name = Self::expanded_name(raw)?;
        self.values.get(name).map(Vec::as_slice)
    }
}

/// The words of an array literal: plain or simply quoted words are known;
/// a word with an expansion in it is not.
fn elements(inner: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut known = true;
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in inner.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {
                if c == '$' || c == '`' {
                    known = false;
                }
                word.push(c);
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    out.push(known.then(|| std::mem::take(&mut word)));
                    word.clear();
                    known = true;
                    started = false;
                }
            }
            None => {
                if c == '$' || c == '`' || c == '*' || c == '?' {
                    known = false;
                }
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(known.then_some(word));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_set_appended_and_expanded() {
        let mut arrays = Arrays::default();
        assert!(arrays.assign("args", "(uv run --group \"tests\")", false, (1, 1)));
        assert!(arrays.assign("args", "(pytest $X)", true, (2, 1)));
        let values: Vec<Option<String>> = arrays
            .expand("\"${args[@]}\"")
            .unwrap()
            .iter()
            .map(|e| e.value.clone())
            .collect();
        assert_eq!(arrays.expand("${args[@]}").unwrap()[4].at, (2, 1));
        assert_eq!(
            values,
            vec![
                Some("uv".to_string()),
                Some("run".to_string()),
                Some("--group".to_string()),
                Some("tests".to_string()),
                Some("pytest".to_string()),
                None,
            ]
        );
        assert!(arrays.assign("args", "()", false, (3, 1)));
        assert!(arrays.expand("${args[*]}").unwrap().is_empty());
        assert!(arrays.expand("$args").is_none());
        assert!(!arrays.assign("x", "plain", false, (4, 1)));
        assert!(arrays.assign("a", "(pip install torch==2.0)", false, (5, 1)));
        assert!(arrays.assign_element("a[2]", Some("torch".to_string()), (6, 1)));
        assert_eq!(
            arrays.expand("${a[@]}").unwrap()[2].value.as_deref(),
            Some("torch")
        );
        assert!(arrays.assign_element("a[$i]", None, (7, 1)));
        assert!(
            arrays
                .expand("${a[@]}")
                .unwrap()
                .iter()
                .all(|e| e.value.is_none())
        );
        assert!(!arrays.assign_element("b[0]", None, (8, 1)));
    }
}
