//! Scripts analysed once per context. A script that many pipelines reach
//! (a chain of scripts, each calling the next) would otherwise be walked
//! again for every path to it, with every script below it: 2,500 pipelines
//! on shared chains took about 5 s and 940 MiB (issue 14). The analysis of one
//! script in one context is kept as a frame: what the visitor made of each
//! command, the errors found in it, and the scripts it calls. Each path that
//! reaches it replays the frame with its own job, via chain, variables and
//! stack; calls are followed at replay, so every path checks its own cycles
//! and depth.
//!
//! A frame is reused only where its analysis would come out the same: same
//! script, phase, directory and image, arguments and call site (the
//! [`Context`]), same values of the variables it read, no depth check that
//! would go the other way, and the same answer for every function marker it
//! looked for on the stack above it ([`Validity`]). The frames kept are
//! bounded ([`MAX_KEPT_EVENTS`], [`MAX_VARIANTS`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::{Rc, Weak};

use layerlock_ci::{Layout, Phase};

use crate::place::Place;
use crate::site::{Arg, Location};
use crate::via::Hops;
use crate::walker::FileError;

/// Deepest chain of scripts, nested shell strings and generated Dockerfiles
/// followed from one CI file.
pub(crate) const MAX_CHAIN: usize = 32;

/// How a script's text maps to its file: its layout, then the layouts of
/// the texts that hold it (innermost first, each with the line it starts on).
pub(crate) type Mapping = (Layout, Vec<(usize, Layout)>);

/// One script's analysis in one context.
pub(crate) struct Frame<I> {
    pub(crate) events: Vec<Event<I>>,
    validity: Validity,
}

/// What the analysis of a script found, in the order the walk met it.
pub(crate) enum Event<I> {
    /// What the visitor made of a command, and the calls inside the frame
    /// that led to it.
    Item(I, Hops),
    /// A shell string or generated Dockerfile that does not parse.
    Error(FileError),
    /// A call past [`MAX_CHAIN`], reported with the whole chain.
    TooDeep(Location, Hops),
    /// A script this one runs.
    Call(Box<Call<I>>),
}

/// Everything a followed script's analysis depends on, besides the
/// variables it reads and the stack above it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Context {
    /// The script, as found in the tree.
    pub(crate) script: PathBuf,
    pub(crate) phase: Phase,
    pub(crate) place: Place,
    /// The arguments it is called with, with where the caller wrote them.
    pub(crate) args: Vec<Arg>,
    /// Where it is called.
    pub(crate) call_site: Location,
    /// How the caller's text maps to its file (for shell strings among the
    /// arguments).
    pub(crate) caller_layout: Rc<Mapping>,
    /// For a Makefile or justfile: the recipes run. `None` for a script.
    pub(crate) recipes: Option<Rc<Recipes>>,
    /// The shell the call names (`sh x.sh`), and the caller's own: with the
    /// script's shebang they decide its grammar.
    pub(crate) shell: Option<layerlock_shell::Grammar>,
    pub(crate) caller_grammar: layerlock_shell::Grammar,
}

/// The recipes a `make` or `just` call runs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Recipes {
    pub(crate) tool: crate::recipes::Tool,
    pub(crate) goals: Vec<String>,
    pub(crate) vars: BTreeMap<String, String>,
}

impl Context {
    /// What the stack holds for this call: the script, or the recipe file
    /// with its goals (a Makefile's recipe may run another of its goals).
    pub(crate) fn key(&self) -> PathBuf {
        match &self.recipes {
            None => self.script.clone(),
            Some(r) => PathBuf::from(format!(
                "<{} {} in {}>",
                r.tool.name(),
                r.goals.join(" "),
                self.script.display()
            )),
        }
    }
}

/// A script call inside a frame, followed when the frame is replayed.
pub(crate) struct Call<I> {
    pub(crate) context: Context,
    /// `path:line` of the call, for the via chain.
    pub(crate) at: Rc<str>,
    pub(crate) env: Inherited,
    /// Markers pushed inside the frame before the call (functions and
    /// shell strings it runs in).
    pub(crate) stack: Vec<PathBuf>,
    /// The calls inside the frame that led to it.
    pub(crate) via: Hops,
    /// The frame it led to last: the next path through the call most
    /// often takes it too, without looking the context up. Weak, so that
    /// frames never keep each other alive past the memo.
    pub(crate) last: RefCell<Weak<Frame<I>>>,
}

impl<I> Call<I> {
    /// The frame for a path through this call, if one is known.
    pub(crate) fn frame(
        &self,
        frames: &Frames<I>,
        stack: &[PathBuf],
        env: &BTreeMap<String, String>,
    ) -> Option<Rc<Frame<I>>> {
        let last = self.last.borrow().upgrade();
        let frame = last
            .filter(|frame| frame.validity.holds(stack.len(), stack, env))
            .or_else(|| frames.find(&self.context, stack, env))?;
        self.remember(&frame);
        Some(frame)
    }

    pub(crate) fn remember(&self, frame: &Rc<Frame<I>>) {
        *self.last.borrow_mut() = Rc::downgrade(frame);
    }
}

/// The variables a called script starts with.
pub(crate) enum Inherited {
    /// The calling frame's own variables, whatever they are on the path
    /// being replayed, with these set by the caller over them.
    Changed(BTreeMap<String, String>),
    /// These (a generated Dockerfile's `ARG` and `ENV`, not the caller's).
    Own(BTreeMap<String, String>),
}

/// Which paths a frame holds for, beyond its [`Context`].
struct Validity {
    /// The stack's length at the frame's script.
    depth: usize,
    /// The largest number of markers the frame had pushed when it checked
    /// the depth.
    deepest: Option<usize>,
    /// A depth check failed: the frame holds at this depth only.
    cut: bool,
    /// Function markers looked for above the frame, and whether they were
    /// there.
    markers: Vec<(PathBuf, bool)>,
    /// Variables read, with their values when the frame was analysed.
    reads: Vec<(String, Option<String>)>,
}

impl Validity {
    fn holds(&self, depth: usize, stack: &[PathBuf], env: &BTreeMap<String, String>) -> bool {
        let depth_ok = if self.cut {
            depth == self.depth
        } else {
            self.deepest.is_none_or(|d| depth + d <= MAX_CHAIN)
        };
        depth_ok
            && self
                .markers
                .iter()
                .all(|(marker, above)| stack.contains(marker) == *above)
            && self
                .reads
                .iter()
                .all(|(name, value)| env.get(name) == value.as_ref())
    }
}

/// The frame being analysed: its events, and what it looked at. Analyses
/// never nest (calls are only recorded), so the walker keeps one.
pub(crate) struct Analysis<I> {
    pub(crate) events: Vec<Event<I>>,
    depth: usize,
    /// The stack above the frame, down to its own script.
    above: Vec<PathBuf>,
    deepest: Option<usize>,
    cut: bool,
    markers: Vec<(PathBuf, bool)>,
    /// Names of the variables read. Reads go through shared references
    /// (a rule asking for `PIP_REQUIRE_HASHES`), hence the cell.
    reads: RefCell<BTreeSet<String>>,
}

impl<I> Analysis<I> {
    pub(crate) fn new(depth: usize, above: &[PathBuf]) -> Self {
        Self {
            events: Vec::new(),
            depth,
            above: above.to_vec(),
            deepest: None,
            cut: false,
            markers: Vec::new(),
            reads: RefCell::default(),
        }
    }

    /// Whether a run that has pushed `pushed` markers inside the frame may
    /// go on past the command at hand.
    pub(crate) fn within_chain(&mut self, pushed: usize) -> bool {
        self.deepest = Some(self.deepest.map_or(pushed, |d| d.max(pushed)));
        let within = self.depth + pushed <= MAX_CHAIN;
        self.cut |= !within;
        within
    }

    /// Whether `marker` is on the stack: pushed inside the frame, or above.
    pub(crate) fn on_stack(&mut self, pushed: &[PathBuf], marker: &Path) -> bool {
        if pushed.iter().any(|p| p == marker) {
            return true;
        }
        let above = self.above.iter().any(|p| p == marker);
        self.markers.push((marker.to_path_buf(), above));
        above
    }

    /// Note variables the analysis read.
    pub(crate) fn read<'n>(&self, names: impl IntoIterator<Item = &'n String>) {
        let mut reads = self.reads.borrow_mut();
        for name in names {
            if !reads.contains(name) {
                reads.insert(name.clone());
            }
        }
    }

    /// The frame, for variables `env` at its start.
    pub(crate) fn finish(self, env: &BTreeMap<String, String>) -> Frame<I> {
        let reads = self
            .reads
            .into_inner()
            .into_iter()
            .map(|name| {
                let value = env.get(&name).cloned();
                (name, value)
            })
            .collect();
        Frame {
            events: self.events,
            validity: Validity {
                depth: self.depth,
                deepest: self.deepest,
                cut: self.cut,
                markers: self.markers,
                reads,
            },
        }
    }
}

/// Frames kept, counted in events: past this the memo starts over, so
/// memory stays bounded however many contexts a tree holds (the chains in
/// progress are analysed once more).
const MAX_KEPT_EVENTS: usize = 1 << 16;

/// Frames kept for one context (other values of the variables read, other
/// depths near the limit): a script called with ever-new values is
/// analysed for each, as without the memo.
const MAX_VARIANTS: usize = 8;

/// The frames analysed so far.
pub(crate) struct Frames<I> {
    known: HashMap<Context, Vec<Rc<Frame<I>>>>,
    kept: usize,
}

impl<I> Default for Frames<I> {
    fn default() -> Self {
        Self {
            known: HashMap::new(),
            kept: 0,
        }
    }
}

impl<I> Frames<I> {
    /// A frame that holds for a path reaching `context` with this stack
    /// (down to the script itself) and these variables.
    pub(crate) fn find(
        &self,
        context: &Context,
        stack: &[PathBuf],
        env: &BTreeMap<String, String>,
    ) -> Option<Rc<Frame<I>>> {
        self.known
            .get(context)?
            .iter()
            .find(|frame| frame.validity.holds(stack.len(), stack, env))
            .cloned()
    }

    pub(crate) fn keep(&mut self, context: Context, frame: Rc<Frame<I>>) {
        let size = 1 + frame.events.len();
        if self.kept + size > MAX_KEPT_EVENTS {
            self.known.clear();
            self.kept = 0;
        }
        let variants = self.known.entry(context).or_default();
        if variants.len() < MAX_VARIANTS {
            variants.push(frame);
            self.kept += size;
        }
    }
}
