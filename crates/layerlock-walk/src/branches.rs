//! Values that depend on the branch taken: `if [ -n "$CI" ]; then
//! runner=(uv run); else runner=(python -m); fi` then `"${runner[@]}"
//! pytest`. After the `if`, a command that uses such a variable is read
//! once with each value a body gave it, and with the value from before the
//! `if` unless every body set it (an `else`, and no body that sets it only
//! in a nested `if`). The worst class of the readings is the one reported.
//! A command inside the same `if` sees the latest value, as before.

use std::collections::BTreeMap;

use layerlock_shell::{Command, If};

use crate::arrays::Element;

/// A variable's value: a string, an array, or unset (or not known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Unset,
    Scalar(String),
    Array(Vec<Element>),
}

/// The values a variable may have because the bodies of an `if` set it.
#[derive(Debug, Clone)]
struct Branched {
    /// The outermost `if` around the assignments (its start).
    at: (usize, usize),
    /// What it may be when no body sets it.
    before: Vec<Value>,
    /// The value each body that sets it leaves.
    arms: BTreeMap<usize, Value>,
    /// A body sets it only under a further condition.
    partial: bool,
}

/// At most this many readings of one command.
const MAX_PASSES: usize = 16;

/// The variables of a script set in the bodies of its `if`s.
#[derive(Debug, Clone, Default)]
pub(crate) struct Branches {
    ifs: Vec<If>,
    vars: BTreeMap<String, Branched>,
}

impl Branches {
    pub(crate) fn new(ifs: &[If]) -> Self {
        Self {
            ifs: ifs.to_vec(),
            vars: BTreeMap::new(),
        }
    }

    /// `name` was set by `command` from `before` to `after`.
    /// The values an earlier `if` may have left a variable with, when it
    /// left it with several.
    pub(crate) fn alternatives(&self, name: &str) -> Vec<Value> {
        self.vars
            .get(name)
            .map(|b| b.values(&self.ifs))
            .unwrap_or_default()
    }

    pub(crate) fn assigned(&mut self, name: &str, command: &Command, before: Value, after: Value) {
        let (line, column) = (command.line, command.column);
        let around: Vec<&If> = self
            .ifs
            .iter()
            .filter(|i| i.contains(line, column))
            .collect();
        let Some(outer) = around.first() else {
            // Set whatever the branch: one value again.
            self.vars.remove(name);
            return;
        };
        let arm = outer.arm(line, column);
        let nested = around.len() > 1 || arm.is_none();
        let entry = match self.vars.get(name) {
            Some(b) if b.at == outer.start => self.vars.get_mut(name).expect("present"),
            _ => {
                // A new `if`: before it, the variable is any value the last
                // one left (or what it was).
                let before = match self.vars.remove(name) {
                    Some(old) => old.values(&self.ifs),
                    None => vec![before],
                };
                self.vars.entry(name.to_string()).or_insert(Branched {
                    at: outer.start,
                    before,
                    arms: BTreeMap::new(),
                    partial: false,
                })
            }
        };
        match arm {
            Some(arm) => {
                entry.arms.insert(arm, after);
            }
            None => entry.partial = true,
        }
        entry.partial |= nested;
    }

    /// The readings of `command`: each a set of values for the variables it
    /// uses that branches left more than one value for. One reading with
    /// none when there are no such variables.
    pub(crate) fn passes(&self, command: &Command) -> Vec<Vec<(String, Value)>> {
        let mut out: Vec<Vec<(String, Value)>> = vec![Vec::new()];
        if self.vars.is_empty() {
            return out;
        }
        let (line, column) = (command.line, command.column);
        let mut names: Vec<&str> = command
            .words
            .iter()
            .flat_map(|w| {
                w.variables
                    .iter()
                    .map(String::as_str)
                    .chain(crate::arrays::Arrays::expanded_name(&w.raw))
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let Some(branched) = self.vars.get(name) else {
                continue;
            };
            let inside = self
                .ifs
                .iter()
                .any(|i| i.start == branched.at && i.contains(line, column));
            let values = branched.values(&self.ifs);
            if inside || values.len() < 2 {
                continue;
            }
            out = out
                .into_iter()
                .flat_map(|pass| {
                    values.iter().map(move |v| {
                        let mut pass = pass.clone();
                        pass.push((name.to_string(), v.clone()));
                        pass
                    })
                })
                .take(MAX_PASSES)
                .collect();
        }
        out
    }
}

impl Branched {
    /// Every value the variable may have after the `if`.
    fn values(&self, ifs: &[If]) -> Vec<Value> {
        let complete = ifs.iter().find(|i| i.start == self.at).is_some_and(|i| {
            i.has_else && !self.partial && (0..i.arms.len()).all(|a| self.arms.contains_key(&a))
        });
        let mut out: Vec<Value> = Vec::new();
        let before = if complete { &[][..] } else { &self.before[..] };
        for v in before.iter().chain(self.arms.values()) {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Branches, layerlock_shell::Script) {
        let script = layerlock_shell::parse(text).unwrap();
        let mut branches = Branches::new(&script.ifs);
        let mut current: BTreeMap<String, String> = BTreeMap::new();
        for command in &script.commands {
            for (name, word) in &command.assignments {
                let before = current
                    .get(name)
                    .map_or(Value::Unset, |v| Value::Scalar(v.clone()));
                let value = word.value.clone().unwrap_or_default();
                current.insert(name.clone(), value.clone());
                branches.assigned(name, command, before, Value::Scalar(value));
            }
        }
        (branches, script)
    }

    fn values(text: &str) -> Vec<Vec<(String, Value)>> {
        let (branches, script) = read(text);
        branches.passes(script.commands.last().unwrap())
    }

    fn scalar(name: &str, v: &str) -> Vec<(String, Value)> {
        vec![(name.to_string(), Value::Scalar(v.to_string()))]
    }

    #[test]
    fn an_if_with_an_else_leaves_the_value_of_each_body() {
        let passes = values("if a; then V=1; else V=2; fi\npip install x==$V\n");
        assert_eq!(passes, [scalar("V", "1"), scalar("V", "2")]);
    }

    #[test]
    fn without_an_else_the_value_before_stays_possible() {
        let passes = values("V=0\nif a; then V=1; fi\npip install x==$V\n");
        assert_eq!(passes, [scalar("V", "0"), scalar("V", "1")]);
        let unset = values("if a; then V=1; fi\npip install x==$V\n");
        assert_eq!(unset[0], vec![("V".to_string(), Value::Unset)]);
    }

    #[test]
    fn inside_the_if_and_after_a_plain_assignment_there_is_one_value() {
        assert_eq!(values("if a; then V=1; pip install x==$V; fi\n"), [vec![]]);
        assert_eq!(
            values("if a; then V=1; else V=2; fi\nV=3\npip install x==$V\n"),
            [vec![]]
        );
    }

    #[test]
    fn a_body_that_sets_it_only_sometimes_keeps_the_value_before() {
        let passes =
            values("V=0\nif a; then if b; then V=1; fi; else V=2; fi\npip install x==$V\n");
        assert_eq!(
            passes,
            [scalar("V", "0"), scalar("V", "1"), scalar("V", "2")]
        );
    }
}
