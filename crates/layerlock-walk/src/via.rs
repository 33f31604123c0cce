//! How a command was reached: the `path:line` of every call on the way, as
//! users read it under a finding. One chain of calls is shared by every
//! command (and finding) it leads to, so a script chain reached from many
//! pipelines holds each pipeline's calls once, not once per finding.

use std::fmt;
use std::rc::Rc;

use serde::ser::{Serialize, SerializeSeq, Serializer};

/// The calls that led to a command, outermost first.
#[derive(Clone, Default)]
pub struct Via(Option<Rc<Call>>);

struct Call {
    up: Via,
    /// `path:line`, shared by every path through the same call.
    at: Rc<str>,
    len: usize,
}

impl Via {
    /// How many calls.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |call| call.len)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The calls, outermost first.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut innermost = Vec::with_capacity(self.len());
        let mut at = self;
        while let Some(call) = &at.0 {
            innermost.push(&*call.at);
            at = &call.up;
        }
        innermost.into_iter().rev()
    }

    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }

    /// These calls, then one more.
    pub(crate) fn then(&self, at: Rc<str>) -> Self {
        Self(Some(Rc::new(Call {
            up: self.clone(),
            at,
            len: self.len() + 1,
        })))
    }

    /// These calls without the innermost one.
    fn up(&self) -> Self {
        self.0
            .as_ref()
            .map(|call| call.up.clone())
            .unwrap_or_default()
    }
}

impl PartialEq for Via {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Via {}

impl fmt::Debug for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A list of strings, as `Vec<String>` is.
impl Serialize for Via {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        self.serialize_calls(&mut seq)?;
        seq.end()
    }
}

impl Via {
    /// Each call, outermost first, without collecting them (a report holds
    /// many).
    pub fn try_each<E>(&self, f: &mut impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
        if let Some(call) = &self.0 {
            call.up.try_each(f)?;
            f(&call.at)?;
        }
        Ok(())
    }

    fn serialize_calls<S: SerializeSeq>(&self, seq: &mut S) -> Result<(), S::Error> {
        self.try_each(&mut |at| seq.serialize_element(at))
    }
}

/// The calls made inside one analysed script, to be put after the calls of
/// whichever path reaches it. A command made of the script's own arguments
/// (`docker exec "$C" "$@"`) is reported where the caller wrote them, so the
/// call into the script is replaced: `dropped` counts the calls of the path
/// taken off before `calls` are added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hops {
    dropped: usize,
    calls: Vec<Rc<str>>,
}

impl Hops {
    pub(crate) fn push(&mut self, at: String) {
        self.calls.push(at.into());
    }

    pub(crate) fn pop(&mut self) {
        if self.calls.pop().is_none() {
            self.dropped += 1;
        }
    }

    /// The whole chain, for a path that reached the script by `via`.
    pub(crate) fn after(&self, via: &Via) -> Via {
        let mut out = via.clone();
        for _ in 0..self.dropped {
            out = out.up();
        }
        for at in &self.calls {
            out = out.then(at.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via(calls: &[&str]) -> Via {
        calls
            .iter()
            .fold(Via::default(), |via, at| via.then((*at).into()))
    }

    #[test]
    fn a_chain_lists_its_calls_outermost_first() {
        let chain = via(&["p.yml:5", "a.sh:3"]).then("b.sh:9".into());
        assert_eq!(chain.to_vec(), ["p.yml:5", "a.sh:3", "b.sh:9"]);
        assert_eq!(chain.len(), 3);
        assert_eq!(
            serde_json::to_string(&chain).ok().as_deref(),
            Some(r#"["p.yml:5","a.sh:3","b.sh:9"]"#)
        );
    }

    /// `Vec::pop` on the caller's via, then `push`, as the walker did when
    /// every path carried its own copy.
    #[test]
    fn hops_replace_calls_of_the_path_as_pop_and_push_would() {
        let path = via(&["p.yml:5", "run.sh:2"]);
        let mut hops = Hops::default();
        hops.pop();
        hops.push("p.yml:5".to_string());
        hops.push("run.sh:7".to_string());
        hops.pop();
        assert_eq!(hops.after(&path).to_vec(), ["p.yml:5", "p.yml:5"]);
        let mut hops = Hops::default();
        hops.pop();
        hops.pop();
        hops.pop();
        assert!(hops.after(&path).is_empty());
        assert_eq!(Hops::default().after(&path), path);
    }
}
