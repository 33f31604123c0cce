//! Where a layer's packages come from: the index a target asks (from the
//! flags and config, else its inputs' options lines), one source per
//! index shared by the layer's targets, and the lookahead a resolution
//! aims at it.

use std::path::PathBuf;
use std::sync::Arc;

use layerlock_dist::PackageSource;
use layerlock_index::{ClientSettings, FetchStats, IndexClient, SecretUrl};
use layerlock_resolve::{CandidatesMemo, Lookahead, ResolveRequest};
use uv_normalize::PackageName;

use crate::CompileError;
use crate::plan::LayerPlan;
use crate::prepare::Prepared;

/// The index options lines of input files count only when no flag or
/// config entry names an index (as with pip); this is the index they are
/// read against.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple/";

/// A package source a resolution can aim its lookahead at, and that
/// counts what it fetched. The index client is one; a test's in-memory
/// source is another (with no lookahead and nothing fetched).
pub trait LayerSource: PackageSource {
    /// Guess ahead for `request` until the returned value is dropped.
    fn aim(
        &self,
        _request: &Arc<ResolveRequest>,
        _memo: &Arc<CandidatesMemo>,
    ) -> Option<Box<dyn Send>> {
        None
    }

    /// What it fetched so far.
    fn stats(&self) -> FetchStats {
        FetchStats::default()
    }

    /// Keep a small answer for later runs (a no-op without a cache).
    fn remember(&self, _key: &str, _value: &str) {}

    /// What [`LayerSource::remember`] kept.
    fn remembered(&self, _key: &str) -> Option<String> {
        None
    }
}

/// The indexes a target asks, after its inputs' options lines.
#[derive(Debug, Clone)]
pub struct IndexChoice {
    pub index_urls: Vec<SecretUrl>,
    pub find_links: Vec<PathBuf>,
}

/// Makes the source for an index: the binary's makes an index client,
/// a test's hands out its in-memory source.
pub trait Connect: Sync {
    fn connect(&self, index: &IndexChoice) -> Result<Arc<dyn LayerSource>, CompileError>;
}

/// Index clients with `settings`, their progress told to `progress`.
pub struct Clients {
    pub settings: ClientSettings,
    pub progress: Arc<dyn layerlock_index::Progress>,
}

impl Connect for Clients {
    fn connect(&self, index: &IndexChoice) -> Result<Arc<dyn LayerSource>, CompileError> {
        let client = self
            .settings
            .client(index.index_urls.clone(), index.find_links.clone())
            .map_err(|e| CompileError::outside("cannot set up the package index client", e))?;
        client.set_progress(self.progress.clone());
        Ok(Arc::new(client))
    }
}

impl LayerSource for IndexClient {
    /// Point the client at one resolution (beside any other it serves): its
    /// lookahead guesses for `request`'s target until the answer drops.
    fn aim(
        &self,
        request: &Arc<ResolveRequest>,
        memo: &Arc<CandidatesMemo>,
    ) -> Option<Box<dyn Send>> {
        // As a page comes in, its versions are sorted and the newest judged
        // on the client's threads, and that version's metadata read: the
        // resolver shares the sorted versions (`memo`) and takes the
        // metadata as it asks, so even from the cache alone this is work
        // moved off its thread, not work added.
        let lookahead = Arc::new(Lookahead::new(request.clone(), memo.clone()));
        let speculating = lookahead.clone();
        let speculator: layerlock_index::Speculator =
            Arc::new(move |name, project, below| speculating.wheel(name, project, below));
        // Walking the tree ahead hides round trips; from the cache alone it
        // only costs reading what the resolver may never ask for.
        let expander: Option<layerlock_index::Expander> = (!self.is_offline()).then(|| {
            Arc::new(
                move |name: &PackageName, metadata: &layerlock_dist::CoreMetadata| {
                    let guess = lookahead.next(name, metadata);
                    layerlock_index::Ahead {
                        projects: guess.projects,
                        rejected: guess.rejected,
                        also_rejected: guess.also_rejected,
                    }
                },
            ) as layerlock_index::Expander
        });
        Some(Box::new(IndexClient::aim(self, speculator, expander)))
    }

    fn stats(&self) -> FetchStats {
        IndexClient::stats(self)
    }

    fn remember(&self, key: &str, value: &str) {
        IndexClient::remember(self, key, value);
    }

    fn remembered(&self, key: &str) -> Option<String> {
        IndexClient::remembered(self, key)
    }
}

/// A package source with no lookahead and nothing counted, such as a
/// test's in-memory one.
pub struct Plain<S>(pub S);

impl<S: PackageSource> PackageSource for Plain<S> {
    fn project(
        &self,
        name: &PackageName,
    ) -> Result<Arc<layerlock_dist::ProjectAnswer>, layerlock_dist::SourceError> {
        self.0.project(name)
    }

    fn metadata(
        &self,
        name: &PackageName,
        file: &layerlock_dist::IndexFile,
    ) -> Result<Arc<layerlock_dist::CoreMetadata>, layerlock_dist::SourceError> {
        self.0.metadata(name, file)
    }

    fn prefetch_project(&self, name: &PackageName) {
        self.0.prefetch_project(name);
    }

    fn prefetch_metadata(&self, name: &PackageName, file: &layerlock_dist::IndexFile) {
        self.0.prefetch_metadata(name, file);
    }

    fn version_files(
        &self,
        name: &PackageName,
        version: &uv_pep440::Version,
    ) -> Option<Result<Vec<layerlock_dist::IndexFile>, layerlock_dist::SourceError>> {
        self.0.version_files(name, version)
    }

    fn wheel_listing(
        &self,
        name: &PackageName,
        file: &layerlock_dist::IndexFile,
    ) -> Result<Arc<layerlock_dist::WheelListing>, layerlock_dist::SourceError> {
        self.0.wheel_listing(name, file)
    }
}

impl<S: PackageSource> LayerSource for Plain<S> {}

/// One source for whatever index is asked, and the indexes that were
/// asked, in order: for tests, and for callers that hold their packages.
pub struct Only {
    source: Arc<dyn LayerSource>,
    asked: std::sync::Mutex<Vec<IndexChoice>>,
}

impl Only {
    pub fn new(source: impl LayerSource + 'static) -> Self {
        Self {
            source: Arc::new(source),
            asked: Default::default(),
        }
    }

    /// The indexes asked so far.
    pub fn asked(&self) -> Vec<IndexChoice> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Connect for Only {
    fn connect(&self, index: &IndexChoice) -> Result<Arc<dyn LayerSource>, CompileError> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(index.clone());
        }
        Ok(self.source.clone())
    }
}

/// The index `layer` asks as `prepared` (its inputs' options lines) names
/// it, with find-links paths from `cwd`.
pub fn index_choice(layer: &LayerPlan, prepared: &Prepared, cwd: &std::path::Path) -> IndexChoice {
    let mut index_urls = layer.index.index_urls.clone();
    let mut find_links = layer.index.find_links.clone();
    if !layer.index_explicit {
        let o = &prepared.input_options;
        if let Some(urls) = o.index_urls(DEFAULT_INDEX) {
            index_urls = urls.into_iter().map(SecretUrl::new).collect();
        }
        find_links.extend(o.find_links.iter().map(|p| cwd.join(p)));
    }
    IndexChoice {
        index_urls,
        find_links,
    }
}

/// The sources a layer's targets made, by the index they ask: targets
/// that ask the same one share its pages and metadata.
#[derive(Default)]
pub(crate) struct Shared(Vec<(String, Arc<dyn LayerSource>)>);

impl Shared {
    /// The source of `view`'s index: one the layer's other targets made
    /// for the same index, else a new one.
    pub(crate) fn source_for(
        &mut self,
        view: &LayerPlan,
        prepared: &Prepared,
        cwd: &std::path::Path,
        connect: &dyn Connect,
    ) -> Result<Arc<dyn LayerSource>, CompileError> {
        // The key never prints: the URLs may carry credentials.
        let key = format!(
            "{:?} {:?} {}",
            view.index
                .index_urls
                .iter()
                .map(SecretUrl::expose)
                .collect::<Vec<_>>(),
            view.index.find_links,
            view.index_explicit
        );
        if let Some((_, source)) = self.0.iter().find(|(k, _)| *k == key) {
            return Ok(source.clone());
        }
        let source = connect.connect(&index_choice(view, prepared, cwd))?;
        self.0.push((key, source.clone()));
        Ok(source)
    }
}
