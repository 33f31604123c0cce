//! The HTTP index client: project pages and core metadata, fetched
//! concurrently on a tokio runtime, shared between everyone who asks, cached
//! on disk, retried with backoff. Implements the resolver's `PackageSource`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap, HeaderValue};
use url::Url;
use uv_normalize::PackageName;
use uv_pep440::Version;

use layerlock_dist::{
    CoreMetadata, IndexFile, PackageSource, PageLines, ProjectAnswer, ProjectFiles, SourceError,
    WheelListing, header_len, version_in_filename,
};

use crate::auth::{Keyring, SecretUrl, redact};
use crate::cache::{Cache, CachedPage, hex_sha256};
use crate::find_links::FindLinks;
use crate::page::{ACCEPT, JSON_TYPE, for_each_json_file, parse_html};
use crate::stats::{Fetch, FetchStats, Recorder};
use crate::{sdist, zip};

/// How to reach packages.
#[derive(Debug, Clone, Default)]
pub struct IndexConfig {
    /// Simple-index URLs in the order they are asked; the first that knows a
    /// project wins (uv's `first-index`, which keeps a private name from
    /// being taken over by a public upload).
    pub index_urls: Vec<SecretUrl>,
    pub find_links: Vec<PathBuf>,
    /// `None`: no persistent cache.
    pub cache_dir: Option<PathBuf>,
    pub offline: bool,
    pub netrc: Option<PathBuf>,
    /// How long an index may stay silent: to connect, and between two reads
    /// of a body. A whole request gets four times this, so a server that
    /// drips a byte a second cannot hold a run.
    pub timeout: Duration,
    pub retries: u32,
    pub concurrency: usize,
    /// Packages whose sdists are read to their end however large (up to
    /// [`MAX_SDIST_BYTES`]), not only their head (see [`sdist_read_cap`]).
    pub read_whole_sdists: Vec<PackageName>,
}

/// How every command makes its index clients: the cache, offline, the
/// credentials file, the timeout and how many requests run at once. The
/// retries are the same for all ([`ClientSettings::RETRIES`]).
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// `None`: no persistent cache (or one that cannot be used).
    pub cache_dir: Option<PathBuf>,
    pub offline: bool,
    pub netrc: Option<PathBuf>,
    /// How long an index may stay silent.
    pub timeout: Duration,
    pub concurrency: usize,
    /// See [`IndexConfig::read_whole_sdists`].
    pub read_whole_sdists: Vec<PackageName>,
}

impl ClientSettings {
    /// How often a failed request is tried again.
    pub const RETRIES: u32 = 3;
    /// Requests at once when resolving: enough to hide round trips over a
    /// whole dependency tree.
    pub const RESOLVING: usize = 48;

    /// A client of `index_urls` and `find_links` with these settings.
    pub fn client(
        &self,
        index_urls: Vec<SecretUrl>,
        find_links: Vec<PathBuf>,
    ) -> Result<IndexClient, ClientError> {
        IndexClient::new(&IndexConfig {
            index_urls,
            find_links,
            cache_dir: self.cache_dir.clone(),
            offline: self.offline,
            netrc: self.netrc.clone(),
            timeout: self.timeout,
            retries: Self::RETRIES,
            concurrency: self.concurrency,
            read_whole_sdists: self.read_whole_sdists.clone(),
        })
    }
}

/// Picks the wheel whose metadata is worth fetching as soon as a project page
/// arrives, before the resolver asks for it.
/// With a version, the newest usable wheel below it instead (the resolver
/// will reject that version).
pub type Speculator =
    Arc<dyn Fn(&PackageName, &ProjectFiles, Option<&Version>) -> Option<IndexFile> + Send + Sync>;

/// What is worth fetching as soon as a wheel's metadata arrives, before the
/// resolver asks: the projects of its dependencies on the target, and
/// whether the resolver will reject this version (then the next older one's
/// metadata is fetched too). With the [`Speculator`] this walks the likely
/// dependency tree at network speed instead of at the resolver's pace.
pub type Expander = Arc<dyn Fn(&PackageName, &CoreMetadata) -> Ahead + Send + Sync>;

/// An [`Expander`]'s answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ahead {
    pub projects: Vec<PackageName>,
    /// The version just read cannot be used: look below it.
    pub rejected: bool,
    /// Versions read earlier that cannot be used either now: look below
    /// each.
    pub also_rejected: Vec<(PackageName, Version)>,
}

/// Told about each finished fetch (for a progress bar).
pub trait Progress: Send + Sync {
    fn fetched(&self, what: &str);
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("`{0}` is not a valid index URL")]
    IndexUrl(String),
    #[error("cannot read --find-links directory {0}")]
    FindLinks(String, #[source] std::io::Error),
    #[error("cannot start the HTTP client: {0}")]
    Http(String),
}

/// Callbacks of the resolutions the client serves at once (the targets of
/// a layer share one client): each joins with its own and leaves when done.
struct Hooks<T>(Mutex<Vec<(u64, T)>>);

impl<T> Default for Hooks<T> {
    fn default() -> Self {
        Self(Mutex::new(Vec::new()))
    }
}

impl<T: Clone> Hooks<T> {
    fn add(&self, id: u64, value: T) {
        if let Ok(mut all) = self.0.lock() {
            all.push((id, value));
        }
    }

    fn remove(&self, id: u64) {
        if let Ok(mut all) = self.0.lock() {
            all.retain(|(i, _)| *i != id);
        }
    }

    fn all(&self) -> Vec<T> {
        self.0
            .lock()
            .map(|all| all.iter().map(|(_, v)| v.clone()).collect())
            .unwrap_or_default()
    }
}

/// The hooks one resolution added: removed when it is dropped.
pub struct Aimed {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for Aimed {
    fn drop(&mut self) {
        self.inner.speculators.remove(self.id);
        self.inner.expanders.remove(self.id);
    }
}

/// A callback the client's user may set once it exists.
struct Hook<T>(Mutex<Option<T>>);

impl<T> Default for Hook<T> {
    fn default() -> Self {
        Self(Mutex::new(None))
    }
}

impl<T: Clone> Hook<T> {
    fn set(&self, value: T) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(value);
        }
    }

    fn get(&self) -> Option<T> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

type Fut<T> = Shared<BoxFuture<'static, Result<Arc<T>, SourceError>>>;

/// Where a project's wheels keep what a metadata read needs: the bytes
/// from their end that hold the zip directory (and METADATA, when it is
/// among the last members), and the bytes from their start that hold
/// METADATA, when it is among the first.
#[derive(Debug, Clone, Copy)]
struct Layout {
    tail: u64,
    head: Option<u64>,
}

struct Index {
    url: Url,
    display: String,
    /// `display`, shared by every file the index lists.
    listed_by: Arc<str>,
}

impl Index {
    /// The page of project `name`.
    fn page_url(&self, name: &PackageName) -> Result<Url, url::ParseError> {
        self.url.join(&format!("{name}/"))
    }
}

enum Page {
    Files(Arc<PageLines>),
    Missing,
    NotCached,
}

struct Inner {
    /// Built when first needed: loading the system's root certificates
    /// takes milliseconds that a run from the cache alone need not spend.
    http: std::sync::OnceLock<Result<reqwest::Client, String>>,
    timeout: Duration,
    indexes: Vec<Index>,
    find_links: FindLinks,
    keyring: Keyring,
    cache: Cache,
    offline: bool,
    retries: u32,
    /// See [`IndexConfig::read_whole_sdists`].
    read_whole: Vec<PackageName>,
    permits: tokio::sync::Semaphore,
    /// What guesses (fetches nobody waits for yet) may hold of `permits`:
    /// the rest stay free for what the resolver waits for.
    guesses: tokio::sync::Semaphore,
    /// URLs the resolver has waited for, and a signal when one is added.
    wanted: Mutex<HashSet<String>>,
    wanted_more: tokio::sync::Notify,
    projects: Mutex<HashMap<PackageName, Fut<ProjectAnswer>>>,
    metadata: Mutex<HashMap<String, Fut<CoreMetadata>>>,
    /// Per project, where its wheels keep their directory and METADATA.
    layouts: Mutex<HashMap<PackageName, Layout>>,
    /// Wheels' file listings made this run (by sha256), from a directory
    /// that was read for METADATA anyway.
    listings: Mutex<HashMap<String, WheelListing>>,
    /// Release answers from a JSON API: found, and not (an index, or a
    /// network, without one answers none: after a few it is not asked).
    releases_found: std::sync::atomic::AtomicUsize,
    releases_missed: std::sync::atomic::AtomicUsize,
    /// Per project, the bytes fetching guessed metadata may cost.
    guessed: Mutex<HashMap<PackageName, u64>>,
    /// Per project, how many of its versions were read and found unusable.
    rejections: Mutex<HashMap<PackageName, usize>>,
    speculators: Hooks<Speculator>,
    expanders: Hooks<Expander>,
    next_hook: std::sync::atomic::AtomicU64,
    progress: Hook<Arc<dyn Progress>>,
    stats: Recorder,
    /// What this client's resolver counted, by host.
    hosts: Arc<Mutex<std::collections::BTreeMap<String, crate::stats::HostCounts>>>,
}

pub struct IndexClient {
    inner: Arc<Inner>,
    /// Always there until the client is dropped.
    runtime: Option<tokio::runtime::Runtime>,
}

impl IndexClient {
    pub fn new(config: &IndexConfig) -> Result<Self, ClientError> {
        let mut keyring = Keyring::default();
        if let Some(netrc) = &config.netrc {
            keyring.read_netrc(netrc);
        }
        let mut indexes = Vec::new();
        for secret in &config.index_urls {
            let raw = secret.expose();
            let mut url = Url::parse(raw).map_err(|_| ClientError::IndexUrl(secret.to_string()))?;
            keyring.take_from_url(&mut url);
            if !url.path().ends_with('/') {
                let path = format!("{}/", url.path());
                url.set_path(&path);
            }
            indexes.push(Index {
                display: url.to_string(),
                listed_by: Arc::from(url.as_str()),
                url,
            });
        }
        let find_links = FindLinks::read(&config.find_links).map_err(|e| {
            ClientError::FindLinks(
                config
                    .find_links
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                e,
            )
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| ClientError::Http(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                http: std::sync::OnceLock::new(),
                timeout: config.timeout,
                indexes,
                find_links,
                keyring,
                cache: Cache::new(config.cache_dir.clone()),
                offline: config.offline,
                retries: config.retries,
                read_whole: config.read_whole_sdists.clone(),
                permits: tokio::sync::Semaphore::new(config.concurrency.max(1)),
                guesses: tokio::sync::Semaphore::new((config.concurrency * 3 / 4).max(1)),
                wanted: Mutex::default(),
                wanted_more: tokio::sync::Notify::new(),
                projects: Mutex::default(),
                metadata: Mutex::default(),
                layouts: Mutex::default(),
                listings: Mutex::default(),
                releases_found: Default::default(),
                releases_missed: Default::default(),
                guessed: Mutex::default(),
                rejections: Mutex::default(),
                speculators: Hooks::default(),
                expanders: Hooks::default(),
                next_hook: std::sync::atomic::AtomicU64::new(0),
                progress: Hook::default(),
                stats: Recorder::new(),
                hosts: Arc::default(),
            }),
            runtime: Some(runtime),
        })
    }

    /// Guess ahead for one more resolution, until the answer is dropped:
    /// its speculator picks the wheels whose metadata to fetch early, its
    /// expander (when given) walks the tree ahead. Several resolutions may
    /// be served at once; each one's guesses are made.
    pub fn aim(&self, speculator: Speculator, expander: Option<Expander>) -> Aimed {
        let id = self
            .inner
            .next_hook
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.speculators.add(id, speculator);
        if let Some(expander) = expander {
            self.inner.expanders.add(id, expander);
        }
        Aimed {
            inner: self.inner.clone(),
            id,
        }
    }

    pub fn set_progress(&self, progress: Arc<dyn Progress>) {
        self.inner.progress.set(progress);
    }

    /// What the client fetched so far, and when.
    pub fn stats(&self) -> FetchStats {
        let mut stats = self.inner.stats.snapshot();
        if let Ok(hosts) = self.inner.hosts.lock() {
            stats.hosts = hosts.clone();
        }
        stats
    }

    /// Whether the client reads the cache alone.
    pub fn is_offline(&self) -> bool {
        self.inner.offline
    }

    /// Upload times by sha256 from a PyPI-style JSON API
    /// (`…/pypi/NAME/VERSION/json`, beside each `…/simple/` index): the
    /// fallback for indexes whose simple pages carry no PEP 700 times.
    pub fn json_api_upload_times(
        &self,
        name: &PackageName,
        version: &str,
    ) -> std::collections::BTreeMap<String, jiff::Timestamp> {
        let inner = self.inner.clone();
        let name = name.clone();
        let version = version.to_string();
        self.runtime().block_on(async move {
            let mut out = std::collections::BTreeMap::new();
            // Offline means no request at all.
            if inner.offline {
                return out;
            }
            for index in &inner.indexes {
                let Some(base) = index.url.as_str().strip_suffix("simple/") else {
                    continue;
                };
                let Ok(url) = Url::parse(&format!("{base}pypi/{name}/{version}/json")) else {
                    continue;
                };
                let Ok(response) = inner
                    .get(Fetch::JsonApi, &url, HeaderMap::new(), MAX_PAGE_BYTES)
                    .await
                else {
                    continue;
                };
                if !response.status.is_success() {
                    continue;
                }
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(&response.body) else {
                    continue;
                };
                for file in value["urls"].as_array().into_iter().flatten() {
                    let sha = file["digests"]["sha256"].as_str();
                    let time = file["upload_time_iso_8601"]
                        .as_str()
                        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
                    if let (Some(sha), Some(time)) = (sha, time) {
                        out.insert(sha.to_ascii_lowercase(), time);
                    }
                }
                if !out.is_empty() {
                    break;
                }
            }
            out
        })
    }
}

impl IndexClient {
    /// The files of `name==version` from the first index with a PyPI JSON
    /// API for releases (`…/pypi/NAME/VERSION/json` beside `…/simple/`),
    /// kept in the cache: a release's files do not change once uploaded.
    /// `None` when no index has one, or it does not know the release.
    pub fn release_files(&self, name: &PackageName, version: &Version) -> Option<Vec<IndexFile>> {
        let inner = self.inner.clone();
        let (name, version) = (name.clone(), version.clone());
        self.runtime()
            .block_on(async move { inner.release_files(&name, &version).await })
    }
}

impl IndexClient {
    /// A small answer kept in the cache under `key`: what a run worked out
    /// from pages that do not change for it (which wheel of an image's pin
    /// fits a target), so the next run need not read them again.
    pub fn remember(&self, key: &str, value: &str) {
        self.inner
            .cache
            .put_listing(&self.inner.note_key(key), value);
    }

    /// What [`IndexClient::remember`] kept under `key`.
    pub fn remembered(&self, key: &str) -> Option<String> {
        self.inner.remembered(key)
    }
}

impl Drop for IndexClient {
    /// Fetches still running were guesses nobody needs now: they are left
    /// behind rather than waited for (a name lookup stuck in the resolver's
    /// blocking pool would otherwise hold the exit for seconds).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl IndexClient {
    /// The names of the files a wheel holds (its zip directory, read by
    /// range): what installing it writes, before it is installed.
    /// What installing the wheel `file` writes: its members with their
    /// CRC-32 and size, and the scripts of its entry points.
    pub fn wheel_listing_of(&self, file: &IndexFile) -> Result<Arc<WheelListing>, SourceError> {
        let inner = self.inner.clone();
        let file = file.clone();
        // On the runtime's threads, like an image's pages (`version_files`).
        let task = self
            .runtime()
            .spawn(async move { inner.wheel_listing(&file).await });
        self.runtime()
            .block_on(task)
            .unwrap_or_else(|e| {
                Err(SourceError::Other {
                    message: e.to_string(),
                })
            })
            .map(Arc::new)
    }

    pub fn wheel_members(&self, file: &IndexFile) -> Result<Vec<String>, SourceError> {
        let inner = self.inner.clone();
        let file = file.clone();
        self.runtime()
            .block_on(async move { inner.wheel_members(&file).await })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        match &self.runtime {
            Some(runtime) => runtime,
            None => unreachable!("the runtime is taken only when the client is dropped"),
        }
    }

    /// The answer of `fut`, counting the wait when it was not there yet.
    fn wait<T>(&self, what: impl FnOnce() -> String, fut: Fut<T>) -> Result<Arc<T>, SourceError> {
        if let Some(done) = fut.peek() {
            return done.clone();
        }
        let start = Instant::now();
        let answer = self.runtime().block_on(fut);
        self.inner.stats.waited(what, start.elapsed());
        answer
    }
}

impl PackageSource for IndexClient {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let fut = Inner::project_future(&self.inner, name);
        if fut.peek().is_none() {
            self.inner.want(
                self.inner
                    .indexes
                    .iter()
                    .filter_map(|index| index.page_url(name).ok())
                    .map(String::from),
            );
        }
        self.wait(|| format!("the page of {name}"), fut)
    }

    fn metadata(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let fut = Inner::metadata_future(&self.inner, name, file);
        if fut.peek().is_none() {
            self.inner.want([file.url.clone()]);
        }
        self.wait(|| format!("the metadata of {}", file.filename), fut)
    }

    fn prefetch_project(&self, name: &PackageName) {
        let fut = Inner::project_future(&self.inner, name);
        self.runtime().spawn(fut);
    }

    fn wheel_listing(
        &self,
        _name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<WheelListing>, SourceError> {
        self.wheel_listing_of(file)
    }

    fn version_files(
        &self,
        name: &PackageName,
        version: &Version,
    ) -> Option<Result<Vec<IndexFile>, SourceError>> {
        if let Some(files) = self.release_files(name, version) {
            return Some(Ok(files));
        }
        // No release API: the project page. One the resolver holds is used;
        // any other is read (and cached on disk) but not kept in memory: an
        // image's hundreds of pins have pages of a hundred megabytes and more,
        // and only one release of each is wanted.
        let held = self
            .inner
            .projects
            .lock()
            .ok()
            .and_then(|map| map.get(name).cloned());
        let answer = match held {
            Some(fut) => self.wait(|| format!("the page of {name}"), fut),
            None => {
                let inner = self.inner.clone();
                let wanted = name.clone();
                let start = Instant::now();
                // On the runtime's own threads: a page parsed on each
                // caller's thread would leave an allocator arena behind in
                // each.
                let task = self
                    .runtime()
                    .spawn(async move { inner.fetch_project(wanted).await });
                let answer = self.runtime().block_on(task).unwrap_or_else(|e| {
                    Err(SourceError::Other {
                        message: e.to_string(),
                    })
                });
                self.inner
                    .stats
                    .waited(|| format!("the page of {name}"), start.elapsed());
                answer
            }
        };
        let files = match answer.as_ref().map(|a| a.as_ref()) {
            Ok(ProjectAnswer::Found(project)) => match project.files() {
                Ok(files) => files
                    .into_iter()
                    .filter(|f| {
                        layerlock_dist::version_in_filename(name, &f.filename).as_ref()
                            == Some(version)
                    })
                    .collect(),
                Err(_) => return None,
            },
            // The caller says what is missing in its own words.
            Ok(ProjectAnswer::NotFound { .. } | ProjectAnswer::NotCached { .. }) | Err(_) => {
                return None;
            }
        };
        Some(Ok(files))
    }

    fn prefetch_metadata(&self, name: &PackageName, file: &IndexFile) {
        // From the cache alone a guess about older versions is only work
        // the resolver may not need; it reads what it does need when it
        // asks. (The newest version's metadata is read as its page comes
        // in, online or not: the resolver nearly always asks for it.)
        if self.inner.offline || !self.inner.may_guess(name, file) {
            return;
        }
        let fut = Inner::metadata_future(&self.inner, name, file);
        self.runtime().spawn(fut);
    }
}

/// A wheel's bytes from `start` on, holding its zip directory `dir`.
struct Held {
    bytes: Vec<u8>,
    start: u64,
    dir: zip::Directory,
}

impl Held {
    /// The zip directory's bytes.
    fn directory(&self) -> Result<&[u8], zip::ZipError> {
        let from = self
            .dir
            .offset
            .checked_sub(self.start)
            .and_then(|at| usize::try_from(at).ok())
            .ok_or(zip::ZipError::Truncated)?;
        let to = from.saturating_add(usize::try_from(self.dir.size).unwrap_or(usize::MAX));
        self.bytes.get(from..to).ok_or(zip::ZipError::Truncated)
    }
}

/// Release lookups that answer nothing before the JSON API is taken to be
/// absent for the rest of the run (the project page is read instead).
const RELEASE_API_TRIES: usize = 4;

/// One file of a PyPI JSON API release answer, as an index page lists it:
/// its name, URL and sha256 at least.
fn release_file(file: &serde_json::Value, listed_by: &str) -> Option<IndexFile> {
    Some(IndexFile {
        filename: file["filename"].as_str()?.to_string(),
        url: file["url"].as_str()?.to_string(),
        sha256: Some(file["digests"]["sha256"].as_str()?.to_ascii_lowercase()),
        requires_python: None,
        yanked: None,
        upload_time: None,
        size: file["size"].as_u64(),
        core_metadata: None,
        listed_by: listed_by.to_string(),
    })
}

/// A release's files as the cache keeps them: `name url sha256 size` a
/// line (none holds white space).
fn encode_release(files: &[IndexFile]) -> String {
    let mut out = String::from("layerlock-release 1\n");
    for f in files {
        out.push_str(&format!(
            "{} {} {} {}\n",
            f.filename,
            f.url,
            f.sha256.as_deref().unwrap_or("-"),
            f.size.map_or("-".to_string(), |s| s.to_string())
        ));
    }
    out
}

fn decode_release(text: &str) -> Option<Vec<IndexFile>> {
    let mut lines = text.lines();
    if lines.next()? != "layerlock-release 1" {
        return None;
    }
    lines
        .map(|line| {
            let mut parts = line.split(' ');
            let (filename, url, sha, size) =
                (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            Some(IndexFile {
                filename: filename.to_string(),
                url: url.to_string(),
                sha256: (sha != "-").then(|| sha.to_string()),
                requires_python: None,
                yanked: None,
                upload_time: None,
                size: size.parse().ok(),
                core_metadata: None,
                listed_by: String::new(),
            })
        })
        .collect()
}

/// `NAME.dist-info/entry_points.txt`, at the top of the wheel.
fn is_entry_points(name: &str) -> bool {
    let mut parts = name.split('/');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(dir), Some("entry_points.txt"), None) if dir.ends_with(".dist-info")
    )
}

/// See [`Inner::wheel_tail`].
enum WheelTail {
    Whole(Vec<u8>),
    Part {
        held: Vec<u8>,
        start: u64,
        /// The wheel's size.
        total: u64,
        dir: zip::Directory,
    },
}

struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Inner {
    fn project_future(this: &Arc<Self>, name: &PackageName) -> Fut<ProjectAnswer> {
        let Ok(mut map) = this.projects.lock() else {
            return futures::future::ready(Err(SourceError::Other {
                message: "internal lock poisoned".to_string(),
            }))
            .boxed()
            .shared();
        };
        map.entry(name.clone())
            .or_insert_with(|| {
                let inner = this.clone();
                let name = name.clone();
                async move { inner.fetch_project(name).await }
                    .boxed()
                    .shared()
            })
            .clone()
    }

    fn metadata_future(
        this: &Arc<Self>,
        name: &PackageName,
        file: &IndexFile,
    ) -> Fut<CoreMetadata> {
        let Ok(mut map) = this.metadata.lock() else {
            return futures::future::ready(Err(SourceError::Other {
                message: "internal lock poisoned".to_string(),
            }))
            .boxed()
            .shared();
        };
        map.entry(file.url.clone())
            .or_insert_with(|| {
                let inner = this.clone();
                let name = name.clone();
                let file = file.clone();
                async move { inner.fetch_metadata(name, file).await }
                    .boxed()
                    .shared()
            })
            .clone()
    }

    fn http(&self) -> Result<&reqwest::Client, SourceError> {
        let timeout = self.timeout;
        self.http
            .get_or_init(|| {
                // One lookup per host for the run, shared by every client;
                // connections are pooled and kept alive (reqwest's
                // default), HTTP/2 where the server offers it by ALPN.
                let resolver =
                    crate::dns::Resolver::new(crate::dns::Hosts::shared(), self.hosts.clone());
                reqwest::Client::builder()
                    .dns_resolver(Arc::new(resolver))
                    .user_agent(concat!("layerlock/", env!("CARGO_PKG_VERSION")))
                    .connect_timeout(timeout.min(Duration::from_secs(10)))
                    .read_timeout(timeout)
                    .timeout(timeout.saturating_mul(4))
                    .build()
                    .map_err(|e| format!("cannot start the HTTP client: {e}"))
            })
            .as_ref()
            .map_err(|message| SourceError::Other {
                message: message.clone(),
            })
    }

    /// Mark `urls` as waited for by the resolver.
    fn want(&self, urls: impl IntoIterator<Item = String>) {
        if let Ok(mut wanted) = self.wanted.lock() {
            wanted.extend(urls);
        }
        self.wanted_more.notify_waiters();
    }

    /// Whether the resolver waits for `url` (a wheel's `.metadata` file
    /// counts as the wheel).
    fn is_wanted(&self, url: &Url) -> bool {
        let url = url.as_str();
        self.wanted.lock().is_ok_and(|wanted| {
            wanted.contains(url)
                || url
                    .strip_suffix(".metadata")
                    .is_some_and(|wheel| wanted.contains(wheel))
        })
    }

    /// The permits a request to `url` holds while it runs: a guess's own
    /// (see [`Self::guess_permit`]) and one of the client's.
    async fn permits_for(
        &self,
        url: &Url,
    ) -> Result<
        (
            Option<tokio::sync::SemaphorePermit<'_>>,
            tokio::sync::SemaphorePermit<'_>,
        ),
        SourceError,
    > {
        let shutting_down = |_| SourceError::Other {
            message: "the client is shutting down".to_string(),
        };
        let guess = self.guess_permit(url).await.map_err(shutting_down)?;
        let permit = self.permits.acquire().await.map_err(shutting_down)?;
        Ok((guess, permit))
    }

    /// A guess waits for one of the permits guesses may hold, so a request
    /// the resolver waits for always finds a permit free; a guess the
    /// resolver comes to wait for stops queueing as one. `None`: no guess.
    async fn guess_permit(
        &self,
        url: &Url,
    ) -> Result<Option<tokio::sync::SemaphorePermit<'_>>, tokio::sync::AcquireError> {
        loop {
            let more = self.wanted_more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            if self.is_wanted(url) {
                return Ok(None);
            }
            tokio::select! {
                permit = self.guesses.acquire() => return permit.map(Some),
                () = &mut more => {}
            }
        }
    }

    fn report(&self, what: &str) {
        if let Some(progress) = self.progress.get() {
            progress.fetched(what);
        }
    }

    /// GET with bounded retries and exponential backoff on connection
    /// failures, 429 and 5xx. The URL never carries credentials.
    async fn get(
        &self,
        kind: Fetch,
        url: &Url,
        headers: HeaderMap,
        limit: u64,
    ) -> Result<Response, SourceError> {
        let _permits = self.permits_for(url).await?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = Instant::now();
            let mut request = self.http()?.get(url.clone()).headers(headers.clone());
            if let Some(creds) = self.keyring.for_url(url) {
                request = request.basic_auth(&creds.username, creds.password.as_ref());
            }
            let retry = attempt <= self.retries;
            let outcome = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    if (status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS)
                        && retry
                    {
                        Err((format!("HTTP {status}"), retry_after(response.headers())))
                    } else {
                        let headers = response.headers().clone();
                        match read_capped(response, limit).await {
                            Ok(Some(body)) => {
                                // A range the server ignored brings the whole wheel.
                                let kind = match kind {
                                    Fetch::Range if status == StatusCode::OK => Fetch::Wheel,
                                    kind => kind,
                                };
                                self.stats.request(kind, body.len(), sent.elapsed());
                                Ok(Response {
                                    status,
                                    headers,
                                    body,
                                })
                            }
                            // Too large is not a passing fault: no retry.
                            Ok(None) => {
                                return Err(SourceError::Invalid {
                                    url: redact(url.as_str()),
                                    message: format!(
                                        "the response is larger than {}, more than was asked for or can be",
                                        byte_count(limit)
                                    ),
                                });
                            }
                            Err(e) => Err((e.without_url().to_string(), None)),
                        }
                    }
                }
                Err(e) => Err((error_chain(&e.without_url()), None)),
            };
            if outcome.is_err() {
                self.stats.request(kind, 0, sent.elapsed());
            }
            match outcome {
                Ok(response) => return Ok(response),
                Err((_, asked)) if retry => {
                    wait_to_retry(attempt, asked).await;
                }
                Err((message, _)) => {
                    return Err(SourceError::Network {
                        url: redact(url.as_str()),
                        attempts: attempt,
                        message,
                    });
                }
            }
        }
    }

    async fn fetch_project(
        self: Arc<Self>,
        name: PackageName,
    ) -> Result<Arc<ProjectAnswer>, SourceError> {
        let local: Vec<IndexFile> = self
            .find_links
            .files
            .get(&name)
            .cloned()
            .unwrap_or_default();
        let mut asked: Vec<String> = self.find_links.dirs.clone();
        let mut not_cached = false;
        let mut page = None;
        for index in &self.indexes {
            asked.push(index.display.clone());
            match self.fetch_page(index, &name).await? {
                Page::Files(found) => {
                    page = Some(found);
                    break;
                }
                Page::Missing => {}
                Page::NotCached => not_cached = true,
            }
        }
        self.report(name.as_ref());
        self.stats.page_arrived(&name);
        let project = ProjectFiles::new(local, page, asked);
        let answer = if !project.is_empty() {
            for speculator in self.speculators.all() {
                if let Some(pick) = speculator(&name, &project, None) {
                    let fut = Self::metadata_future(&self, &name, &pick);
                    tokio::spawn(fut);
                }
            }
            ProjectAnswer::Found(project)
        } else if not_cached {
            ProjectAnswer::NotCached {
                asked: project.asked,
            }
        } else {
            ProjectAnswer::NotFound {
                asked: project.asked,
            }
        };
        Ok(Arc::new(answer))
    }

    /// The metadata of the newest usable wheels of `name` below `version`
    /// (whose own the resolver will reject), fetched ahead: two at the
    /// first rejection of `name` (a reason to reject one version is often
    /// one to reject the next), twice as many at each further one, up to
    /// [`MAX_OLDER`], so a long walk down (every version needing a newer
    /// pin than the base's) takes a few round trips, not one per version.
    /// A guess: errors are the resolver's to meet if it asks.
    async fn older_metadata(self: Arc<Self>, name: PackageName, version: Version) {
        let count = {
            let Ok(mut rejections) = self.rejections.lock() else {
                return;
            };
            let seen = rejections.entry(name.clone()).or_default();
            // 2, 4, 8, …: counted no further than the cap needs.
            *seen = (*seen + 1).min(MAX_OLDER.ilog2() as usize);
            (1usize << *seen).min(MAX_OLDER)
        };
        let Ok(answer) = Self::project_future(&self, &name).await else {
            return;
        };
        let ProjectAnswer::Found(project) = answer.as_ref() else {
            return;
        };
        for speculator in self.speculators.all() {
            let mut below = version.clone();
            for _ in 0..count {
                let Some(pick) = speculator(&name, project, Some(&below)) else {
                    break;
                };
                let Some(older) = version_in_filename(&name, &pick.filename) else {
                    break;
                };
                if self.may_guess(&name, &pick) {
                    tokio::spawn(Self::metadata_future(&self, &name, &pick));
                }
                below = older;
            }
        }
    }

    async fn fetch_page(&self, index: &Index, name: &PackageName) -> Result<Page, SourceError> {
        let url = index.page_url(name).map_err(|e| SourceError::Other {
            message: format!("cannot form a project URL from {}: {e}", index.display),
        })?;
        let key = url.to_string();
        let cached = self.cache.page(&key, &index.listed_by);
        if self.offline {
            return Ok(match cached {
                Some(page) => {
                    self.stats.page_cached();
                    self.read_page(&url, page)?
                }
                None => Page::NotCached,
            });
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static(ACCEPT));
        if let Some(page) = &cached {
            if let Some(etag) = page
                .etag
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                headers.insert(header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = page
                .last_modified
                .as_deref()
                .and_then(|v| HeaderValue::from_str(v).ok())
            {
                headers.insert(header::IF_MODIFIED_SINCE, lm);
            }
        }
        let response = self.get(Fetch::Page, &url, headers, MAX_PAGE_BYTES).await?;
        if response.status == StatusCode::NOT_MODIFIED
            && let Some(page) = cached
        {
            self.stats.page_cached();
            return self.read_page(&url, page);
        }
        let header = |name: header::HeaderName| {
            response
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let unkept = || {
            SourceError::Invalid {
            url: redact(url.as_str()),
            message: "its list of files does not read back as layerlock writes it; please report this page"
                .to_string(),
        }
        };
        let page = match response.status {
            s if s.is_success() => {
                let content_type = header(header::CONTENT_TYPE);
                let is_json = content_type
                    .as_deref()
                    .is_some_and(|t| t.starts_with(JSON_TYPE) || t.starts_with("application/json"));
                // Written as the cache keeps them, one file at a time: a
                // page of tens of megabytes is not held twice over.
                let mut lines = String::new();
                if is_json {
                    for_each_json_file(&url, &response.body, &index.display, |file| {
                        file.write_line(&mut lines);
                    })
                    .map_err(|e| SourceError::Invalid {
                        url: redact(url.as_str()),
                        message: e.to_string(),
                    })?;
                } else {
                    for file in parse_html(&url, &response.body, &index.display) {
                        file.write_line(&mut lines);
                    }
                }
                let etag = header(header::ETAG);
                let last_modified = header(header::LAST_MODIFIED);
                drop(response);
                CachedPage {
                    url: key,
                    status: 200,
                    etag,
                    last_modified,
                    files: PageLines::from_lines(&lines, name, index.listed_by.clone())
                        .ok_or_else(unkept)?,
                }
            }
            StatusCode::NOT_FOUND | StatusCode::GONE => CachedPage {
                url: key,
                status: 404,
                etag: None,
                last_modified: None,
                files: PageLines::from_files(&[], name, index.listed_by.clone())
                    .ok_or_else(unkept)?,
            },
            status => {
                return Err(SourceError::Status {
                    url: redact(url.as_str()),
                    status: status.as_u16(),
                });
            }
        };
        // Checked before it is cached, and again whenever it is read (from
        // the index, which names the first such line of the page).
        check_schemes(&url, &page.files)?;
        self.cache.put_page(&page);
        self.read_page(&url, page)
    }

    /// A page's files, once they are known to be safe to use.
    fn read_page(&self, url: &Url, page: CachedPage) -> Result<Page, SourceError> {
        if page.status == 404 {
            return Ok(Page::Missing);
        }
        check_schemes(url, &page.files)?;
        Ok(Page::Files(Arc::new(page.files)))
    }

    async fn fetch_metadata(
        self: Arc<Self>,
        name: PackageName,
        file: IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let key = match &file.sha256 {
            Some(h) => format!("sha256-{h}"),
            None => format!("url-{}", hex_sha256(file.url.as_bytes())),
        };
        // What an sdist's metadata is depends on the reader's rules, so
        // its answers are kept under the rules' number.
        let sdist = match file.kind(&name) {
            layerlock_dist::DistKind::Sdist(version) => Some(version),
            _ => None,
        };
        // Read whole (`--read-whole-sdist`), an sdist may say what its
        // head did not: that answer is kept apart from the head's.
        let key = match &sdist {
            Some(_) if self.read_whole.contains(&name) => format!("{}-whole", sdist_key(&key)),
            Some(_) => sdist_key(&key),
            None => key,
        };
        let invalid = |message: String| SourceError::Invalid {
            url: redact(&file.url),
            message,
        };
        let bytes = match self.cache.metadata(&key) {
            Some(bytes) => {
                self.stats.metadata_cached();
                bytes
            }
            None if self.offline && !file.url.starts_with("file:") => {
                return Err(SourceError::Offline {
                    url: redact(&file.url),
                });
            }
            None => {
                let mut bytes = match &sdist {
                    Some(version) => self.sdist_metadata(&name, version, &file).await?,
                    None => self.download_metadata(&name, &file).await?,
                };
                // Only the header is ever read: the description is not kept.
                if !bytes.starts_with(DYNAMIC) {
                    bytes.truncate(header_len(&bytes));
                }
                self.cache.put_metadata(&key, &bytes);
                bytes
            }
        };
        if let Some(why) = bytes.strip_prefix(DYNAMIC) {
            return Err(SourceError::Dynamic {
                message: format!(
                    "{name}=={}: its source distribution does not say its dependencies statically ({})",
                    sdist.as_ref().map_or_else(String::new, ToString::to_string),
                    String::from_utf8_lossy(why)
                ),
            });
        }
        let metadata = CoreMetadata::parse(&bytes).map_err(|e| invalid(e.to_string()))?;
        if metadata.name != name {
            return Err(invalid(format!(
                "its METADATA names {} instead of {name}",
                metadata.name
            )));
        }
        self.report(&file.filename);
        self.stats.metadata_arrived(&name);
        for expand in self.expanders.all() {
            let ahead = expand(&name, &metadata);
            for next in &ahead.projects {
                tokio::spawn(Self::project_future(&self, next));
            }
            if ahead.rejected {
                tokio::spawn(Self::older_metadata(
                    self.clone(),
                    name.clone(),
                    metadata.version.clone(),
                ));
            }
            for (other, version) in ahead.also_rejected {
                tokio::spawn(Self::older_metadata(self.clone(), other, version));
            }
        }
        Ok(Arc::new(metadata))
    }

    /// A source distribution's metadata, read from the files in its
    /// archive that hold it statically (see
    /// [`layerlock_dist::sdist_metadata`]); when none does, [`DYNAMIC`]
    /// and why, which the cache keeps like any answer. A `.tar.gz` is read
    /// as it arrives and only until its files settle the answer (gzip
    /// cannot be read by range) and stops at its cap ([`sdist_read_cap`]),
    /// which is a refusal with why; a zip is read by range. An archive read
    /// to its end is checked against its sha256; one read in part cannot
    /// be, as with the ranges read of a wheel.
    async fn sdist_metadata(
        &self,
        name: &PackageName,
        version: &uv_pep440::Version,
        file: &IndexFile,
    ) -> Result<Vec<u8>, SourceError> {
        let (url, invalid) = parsed_url(file)?;
        let lower = file.filename.to_ascii_lowercase();
        let whole = self.read_whole.contains(name);
        let read = if url.scheme() == "file" {
            let bytes = local_file(&url, MAX_SDIST_BYTES, "an sdist")?;
            self.check_hash(&url, file, &bytes)?;
            sdist::source_files(&file.filename, &bytes)
        } else if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            self.stream_sdist(&url, file, whole).await?
        } else {
            self.ranged_sdist(&url, file).await?
        };
        let files = match read {
            Ok(files) => files,
            Err(why @ sdist::SdistError::PastCap { cap, .. }) => {
                let more = if cap < MAX_SDIST_BYTES {
                    format!("; --read-whole-sdist {name} reads it to its end")
                } else {
                    String::new()
                };
                return Ok([DYNAMIC, why.to_string().as_bytes(), more.as_bytes()].concat());
            }
            Err(e) => return Err(invalid(e.to_string())),
        };
        Ok(
            match layerlock_dist::sdist_metadata(&files, name.as_ref(), &version.to_string()) {
                Ok(metadata) => metadata,
                Err(why) => [DYNAMIC, why.as_bytes()].concat(),
            },
        )
    }

    /// A zip sdist's wanted files, read by range as a wheel's METADATA is:
    /// its central directory from the end, then only the members wanted,
    /// however large the archive. A server that ignores ranges sends it
    /// whole, which is read up to [`MAX_SDIST_READ`] and checked against
    /// its sha256.
    async fn ranged_sdist(
        &self,
        url: &Url,
        file: &IndexFile,
    ) -> Result<Result<layerlock_dist::SourceFiles, sdist::SdistError>, SourceError> {
        let held = self.zip_directory(url, file, MAX_SDIST_READ).await?;
        let directory = match held.directory() {
            Ok(directory) => directory,
            Err(e) => return Ok(Err(e.into())),
        };
        let wanted = match sdist::zip_wanted(directory) {
            Ok(wanted) => wanted,
            Err(e) => return Ok(Err(e)),
        };
        let mut files = layerlock_dist::SourceFiles::default();
        let mut inflated = 0;
        for (which, name, member) in wanted {
            let data = self.member_bytes(url, &held, &member).await?;
            if let Err(e) = sdist::keep_member(&mut files, which, &name, data, &mut inflated) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(files))
    }

    /// A `.tar.gz` sdist's wanted files, read as the body arrives, with
    /// bounded retries of a connection that fails (the read starts over).
    async fn stream_sdist(
        &self,
        url: &Url,
        file: &IndexFile,
        whole: bool,
    ) -> Result<Result<layerlock_dist::SourceFiles, sdist::SdistError>, SourceError> {
        let _permits = self.permits_for(url).await?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.stream_once(url, file, whole).await {
                Ok(read) => return Ok(read),
                Err(Streamed::Failed(e)) => return Err(e),
                Err(Streamed::Passing(_, asked)) if attempt <= self.retries => {
                    wait_to_retry(attempt, asked).await;
                }
                Err(Streamed::Passing(message, _)) => {
                    return Err(SourceError::Network {
                        url: redact(url.as_str()),
                        attempts: attempt,
                        message,
                    });
                }
            }
        }
    }

    /// One GET of a `.tar.gz` sdist, its body handed piece by piece to the
    /// archive reader on a blocking thread; the download stops when the
    /// reader has its answer or at its cap ([`sdist_read_cap`]).
    async fn stream_once(
        &self,
        url: &Url,
        file: &IndexFile,
        whole: bool,
    ) -> Result<Result<layerlock_dist::SourceFiles, sdist::SdistError>, Streamed> {
        let sent = Instant::now();
        let mut request = self.http().map_err(Streamed::Failed)?.get(url.clone());
        if let Some(creds) = self.keyring.for_url(url) {
            request = request.basic_auth(&creds.username, creds.password.as_ref());
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                self.stats.request(Fetch::Sdist, 0, sent.elapsed());
                return Err(Streamed::Passing(error_chain(&e.without_url()), None));
            }
        };
        let status = response.status();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            self.stats.request(Fetch::Sdist, 0, sent.elapsed());
            let asked = retry_after(response.headers());
            return Err(Streamed::Passing(format!("HTTP {status}"), asked));
        }
        if !status.is_success() {
            self.stats.request(Fetch::Sdist, 0, sent.elapsed());
            return Err(Streamed::Failed(SourceError::Status {
                url: redact(url.as_str()),
                status: status.as_u16(),
            }));
        }
        let (tx, rx) = tokio::sync::mpsc::channel(PIECES_AHEAD);
        let reader =
            tokio::task::spawn_blocking(move || sdist::tar_gz_files(sdist::Pieces::new(rx)));
        let fed = feed(response, tx, file.size, whole).await;
        self.stats
            .request(Fetch::Sdist, fed.bytes as usize, sent.elapsed());
        let read = reader.await.map_err(|e| {
            Streamed::Failed(SourceError::Other {
                message: format!("the sdist reader stopped: {e}"),
            })
        })?;
        if let Some(why) = fed.failed {
            return Err(Streamed::Passing(why, None));
        }
        if let (Some(actual), Some(expected)) = (fed.sha256, &file.sha256)
            && &actual != expected
        {
            return Err(Streamed::Failed(SourceError::HashMismatch {
                url: redact(url.as_str()),
                expected: expected.clone(),
                actual,
            }));
        }
        Ok(read)
    }

    /// PEP 658 `.metadata` when offered, else ranges of the wheel's zip,
    /// else the whole wheel (checked against its sha256).
    async fn download_metadata(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Vec<u8>, SourceError> {
        let url = Url::parse(&file.url).map_err(|e| SourceError::Invalid {
            url: redact(&file.url),
            message: e.to_string(),
        })?;
        if url.scheme() == "file" {
            let path = url.to_file_path().map_err(|()| SourceError::Invalid {
                url: file.url.clone(),
                message: "not a local path".to_string(),
            })?;
            // Only a regular file: a FIFO or device named `x.whl` must not
            // hang or flood the read.
            if !fs_err::metadata(&path).is_ok_and(|m| m.is_file()) {
                return Err(SourceError::Invalid {
                    url: file.url.clone(),
                    message: "not a regular file".to_string(),
                });
            }
            let bytes = fs_err::read(&path).map_err(|e| SourceError::Other {
                message: e.to_string(),
            })?;
            return zip::metadata_from_wheel(&bytes).map_err(|e| SourceError::Invalid {
                url: file.url.clone(),
                message: e.to_string(),
            });
        }
        if let Some(expected) = &file.core_metadata {
            let meta_url = Url::parse(&format!("{}.metadata", file.url)).map_err(|e| {
                SourceError::Invalid {
                    url: redact(&file.url),
                    message: e.to_string(),
                }
            })?;
            let response = self
                .get(
                    Fetch::Metadata,
                    &meta_url,
                    HeaderMap::new(),
                    zip::MAX_METADATA_BYTES,
                )
                .await?;
            if response.status.is_success() {
                if let Some(expected) = expected {
                    let actual = hex_sha256(&response.body);
                    if &actual != expected {
                        return Err(SourceError::HashMismatch {
                            url: redact(meta_url.as_str()),
                            expected: expected.clone(),
                            actual,
                        });
                    }
                }
                return Ok(response.body);
            }
            // An offered but missing file: fall through to the wheel itself.
        }
        self.metadata_by_range(name, &url, file).await
    }

    /// METADATA from byte ranges of the wheel, in one round trip when the
    /// first read covers the zip directory and the .dist-info, two when it
    /// does not (the missing bytes before it, with room for the .dist-info
    /// members ahead of the directory), three only when METADATA lies
    /// further back still. Where a project's wheels kept these is
    /// remembered ([`Layout`]), so its next version takes one round trip of
    /// the right size, reading the wheel's start at the same time when that
    /// is where its METADATA was.
    async fn metadata_by_range(
        &self,
        name: &PackageName,
        url: &Url,
        file: &IndexFile,
    ) -> Result<Vec<u8>, SourceError> {
        let invalid = |message: String| SourceError::Invalid {
            url: redact(url.as_str()),
            message,
        };
        let zip_err = |e: zip::ZipError| invalid(e.to_string());
        let layout = self.layout(name);
        let first = layout.map_or_else(|| tail_len(file.size), |l| l.tail);
        let tail_read = self.get(
            Fetch::Range,
            url,
            range_header(&format!("bytes=-{first}")),
            MAX_WHEEL_BYTES,
        );
        let (tail, head) = match layout.and_then(|l| l.head) {
            Some(len) => {
                let (tail, head) = futures::join!(tail_read, self.range(url, 0, len));
                // The head is a guess; without it METADATA takes a range more.
                (tail?, head.unwrap_or_default())
            }
            None => (tail_read.await?, Vec::new()),
        };
        let (mut held, mut start, total, dir) = match self.wheel_tail(url, file, tail)? {
            // No range support: the whole wheel, checked.
            WheelTail::Whole(bytes) => {
                return zip::metadata_from_wheel(&bytes).map_err(zip_err);
            }
            WheelTail::Part {
                held,
                start,
                total,
                dir,
            } => (held, start, total, dir),
        };
        if dir.offset < start {
            // METADATA is usually among the last members before the
            // directory, ahead of RECORD, which is about as long as the
            // directory itself.
            let from = dir.offset.saturating_sub(dir.size.min(MAX_DIST_INFO_GUESS));
            let mut before = self.range(url, from, start - from).await?;
            if before.len() as u64 != start - from {
                return Err(zip_err(zip::ZipError::Truncated));
            }
            before.extend_from_slice(&held);
            held = before;
            start = from;
        }
        let at = |offset: u64| usize::try_from(offset - start).unwrap_or(usize::MAX);
        let dir_end =
            at(dir.offset).saturating_add(usize::try_from(dir.size).unwrap_or(usize::MAX));
        let directory = held
            .get(at(dir.offset)..dir_end)
            .ok_or_else(|| zip_err(zip::ZipError::Truncated))?;
        let member = zip::find_metadata(directory).map_err(zip_err)?;
        self.remember_listing(file, directory, &held, start);
        // A METADATA that cannot inflate to under the cap is not fetched.
        if member.compressed_size > zip::MAX_METADATA_BYTES {
            return Err(zip_err(zip::ZipError::TooLarge));
        }
        let want = zip::LOCAL_SLACK.saturating_add(member.compressed_size);
        self.learn_layout(name, total, &dir, &member, want);
        if member.local_header_offset >= start
            && let Some(local) = held.get(at(member.local_header_offset)..)
            && let Ok(bytes) = zip::read_member(local, &member)
        {
            return Ok(bytes);
        }
        if let Some(local) = usize::try_from(member.local_header_offset)
            .ok()
            .and_then(|at| head.get(at..))
            && let Ok(bytes) = zip::read_member(local, &member)
        {
            return Ok(bytes);
        }
        let local = self
            .range(
                url,
                member.local_header_offset,
                want.min(total.saturating_sub(member.local_header_offset)),
            )
            .await?;
        zip::read_member(&local, &member).map_err(zip_err)
    }

    /// Keep the listing a directory read for METADATA gives, when its
    /// entry points (if any) are among the bytes held too: the file check
    /// then needs no read of its own.
    fn remember_listing(&self, file: &IndexFile, directory: &[u8], held: &[u8], start: u64) {
        let Some(sha256) = &file.sha256 else { return };
        let Ok(members) = zip::members(directory) else {
            return;
        };
        let mut listing = WheelListing::default();
        for (name, member) in &members {
            if is_entry_points(name) {
                let local = member
                    .local_header_offset
                    .checked_sub(start)
                    .and_then(|at| usize::try_from(at).ok())
                    .and_then(|at| held.get(at..));
                let Some(Ok(bytes)) = local.map(|l| zip::read_member(l, member)) else {
                    return;
                };
                listing.scripts =
                    layerlock_dist::entry_point_scripts(&String::from_utf8_lossy(&bytes));
            }
            listing.files.push(layerlock_dist::ListedFile {
                path: name.clone(),
                crc32: member.crc32,
                size: member.size,
            });
        }
        listing.files.sort();
        let key = format!("sha256-{sha256}");
        self.cache.put_listing(&key, &listing.encode());
        if let Ok(mut listings) = self.listings.lock() {
            listings.insert(key, listing);
        }
    }

    /// Where `name`'s wheels keep their directory and METADATA, learnt from
    /// an earlier version of it.
    fn layout(&self, name: &PackageName) -> Option<Layout> {
        let layouts = self.layouts.lock().ok()?;
        layouts.get(name).copied()
    }

    /// Remember where a wheel of `name` of `total` bytes kept its directory
    /// and METADATA (`want` bytes from its local header). Versions differ a
    /// little, so a margin is added.
    fn learn_layout(
        &self,
        name: &PackageName,
        total: u64,
        dir: &zip::Directory,
        member: &zip::Member,
        want: u64,
    ) {
        let pad = |n: u64| {
            n.saturating_add(n / 8)
                .saturating_add(zip::LOCAL_SLACK)
                .clamp(MIN_TAIL_HINT, MAX_TAIL_HINT)
        };
        let metadata = member.local_header_offset;
        // Near the directory: among the last members, as most build
        // backends write the .dist-info, with only RECORD (about as long as
        // the directory) and small files between.
        let near_end = metadata
            .saturating_add(dir.size)
            .saturating_add(NEAR_END_SLACK)
            >= dir.offset;
        let metadata_end = metadata.saturating_add(want);
        let layout = if near_end {
            Layout {
                tail: pad(total.saturating_sub(metadata.min(dir.offset))),
                head: None,
            }
        } else {
            Layout {
                tail: pad(total.saturating_sub(dir.offset)),
                // First in the wheel: read its start alongside the end.
                head: (metadata_end <= MAX_HEAD).then(|| pad(metadata_end)),
            }
        };
        if let Ok(mut layouts) = self.layouts.lock() {
            layouts.insert(name.clone(), layout);
        }
    }

    /// Whether a guessed read of `name`'s `file` fits what may be spent on
    /// guesses about one project ([`MAX_GUESS_BYTES`]); counts it if so.
    fn may_guess(&self, name: &PackageName, file: &IndexFile) -> bool {
        // Already asked for: no new cost.
        if self
            .metadata
            .lock()
            .is_ok_and(|asked| asked.contains_key(&file.url))
        {
            return true;
        }
        let cost = self.layout(name).map_or_else(
            || tail_len(file.size),
            |l| l.tail.saturating_add(l.head.unwrap_or(0)),
        );
        let Ok(mut spent) = self.guessed.lock() else {
            return false;
        };
        let spent = spent.entry(name.clone()).or_default();
        if spent.saturating_add(cost) > MAX_GUESS_BYTES {
            return false;
        }
        *spent += cost;
        true
    }

    /// The names of the files a wheel holds: its zip directory, read by
    /// range (a few KiB of even the largest wheel), else the whole wheel
    /// (checked against its sha256), or the file itself for a local one.
    async fn wheel_members(&self, file: &IndexFile) -> Result<Vec<String>, SourceError> {
        let (url, invalid) = parsed_url(file)?;
        let zip_err = |e: zip::ZipError| invalid(e.to_string());
        let directory = self.zip_directory(&url, file, MAX_WHEEL_BYTES).await?;
        zip::member_names(directory.directory().map_err(zip_err)?).map_err(zip_err)
    }

    /// The bytes of a zip's directory (a wheel's or a zip sdist's): the
    /// whole archive when it is a local file or the server sent it whole
    /// (either no larger than `whole_cap`), else the range from the
    /// directory's start to the end.
    async fn zip_directory(
        &self,
        url: &Url,
        file: &IndexFile,
        whole_cap: u64,
    ) -> Result<Held, SourceError> {
        let invalid = |e: zip::ZipError| SourceError::Invalid {
            url: redact(url.as_str()),
            message: e.to_string(),
        };
        if url.scheme() == "file" {
            let bytes = local_file(url, whole_cap, "a zip archive")?;
            self.check_hash(url, file, &bytes)?;
            let dir = zip::find_directory(&bytes, 0).map_err(invalid)?;
            return Ok(Held {
                bytes,
                start: 0,
                dir,
            });
        }
        let tail = self
            .get(
                Fetch::Range,
                url,
                range_header(&format!("bytes=-{}", tail_len(file.size))),
                whole_cap,
            )
            .await?;
        let (mut held, mut start, dir) = match self.wheel_tail(url, file, tail)? {
            WheelTail::Whole(bytes) => {
                let dir = zip::find_directory(&bytes, 0).map_err(invalid)?;
                return Ok(Held {
                    bytes,
                    start: 0,
                    dir,
                });
            }
            WheelTail::Part {
                held, start, dir, ..
            } => (held, start, dir),
        };
        if dir.offset < start {
            let mut before = self.range(url, dir.offset, start - dir.offset).await?;
            if before.len() as u64 != start - dir.offset {
                return Err(invalid(zip::ZipError::Truncated));
            }
            before.extend_from_slice(&held);
            held = before;
            start = dir.offset;
        }
        Ok(Held {
            bytes: held,
            start,
            dir,
        })
    }

    /// A small answer kept in the cache under `key` (see
    /// [`IndexClient::remember`]).
    fn remembered(&self, key: &str) -> Option<String> {
        self.cache.listing(&self.note_key(key))
    }

    /// Where a note of `key` is kept: it holds for these indexes only.
    fn note_key(&self, key: &str) -> String {
        let mut whole = key.to_string();
        for index in &self.indexes {
            whole.push(' ');
            whole.push_str(&redact(index.url.as_str()));
        }
        format!("note-{}", hex_sha256(whole.as_bytes()))
    }

    /// See [`IndexClient::release_files`].
    async fn release_files(&self, name: &PackageName, version: &Version) -> Option<Vec<IndexFile>> {
        for index in &self.indexes {
            let base = index.url.as_str().strip_suffix("simple/")?;
            let url = Url::parse(&format!("{base}pypi/{name}/{version}/json")).ok()?;
            let key = format!("release-{}", hex_sha256(url.as_str().as_bytes()));
            if let Some(files) = self.cache.listing(&key).and_then(|t| decode_release(&t)) {
                return Some(files);
            }
            use std::sync::atomic::Ordering::Relaxed;
            let (found, missed) = (&self.releases_found, &self.releases_missed);
            if self.offline
                || (found.load(Relaxed) == 0 && missed.load(Relaxed) >= RELEASE_API_TRIES)
            {
                return None;
            }
            let answer = self
                .get(Fetch::JsonApi, &url, HeaderMap::new(), MAX_PAGE_BYTES)
                .await;
            let Some(response) = answer.ok().filter(|r| r.status.is_success()) else {
                missed.fetch_add(1, Relaxed);
                continue;
            };
            found.fetch_add(1, Relaxed);
            let value: serde_json::Value = serde_json::from_slice(&response.body).ok()?;
            let listed_by = redact(index.url.as_str());
            let files: Vec<IndexFile> = value["urls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| release_file(f, &listed_by))
                .collect();
            if files.is_empty() {
                continue;
            }
            self.cache.put_listing(&key, &encode_release(&files));
            return Some(files);
        }
        None
    }

    /// What installing the wheel `file` writes, from the cache (a wheel's
    /// contents never change: the key is its sha256) or its zip directory.
    async fn wheel_listing(&self, file: &IndexFile) -> Result<WheelListing, SourceError> {
        let key = file.sha256.as_ref().map(|h| format!("sha256-{h}"));
        if let Some(listing) = key.as_deref().and_then(|k| {
            let held = self.listings.lock().ok()?.get(k).cloned();
            held.or_else(|| WheelListing::decode(&self.cache.listing(k)?))
        }) {
            return Ok(listing);
        }
        if self.offline && !file.url.starts_with("file:") {
            return Err(SourceError::Offline {
                url: redact(&file.url),
            });
        }
        let (url, invalid) = parsed_url(file)?;
        let zip_err = |e: zip::ZipError| invalid(e.to_string());
        let held = self.zip_directory(&url, file, MAX_WHEEL_BYTES).await?;
        let members = zip::members(held.directory().map_err(zip_err)?).map_err(zip_err)?;
        let mut listing = WheelListing::default();
        let mut entry_points = None;
        for (name, member) in &members {
            if is_entry_points(name) {
                entry_points = Some(member.clone());
            }
            listing.files.push(layerlock_dist::ListedFile {
                path: name.clone(),
                crc32: member.crc32,
                size: member.size,
            });
        }
        if let Some(member) = entry_points {
            let bytes = self.member_bytes(&url, &held, &member).await?;
            listing.scripts = layerlock_dist::entry_point_scripts(&String::from_utf8_lossy(&bytes));
        }
        listing.files.sort();
        if let Some(key) = &key {
            self.cache.put_listing(key, &listing.encode());
        }
        Ok(listing)
    }

    /// One member's bytes: from what is held when it lies there, else by
    /// a range read of its local header and data.
    async fn member_bytes(
        &self,
        url: &Url,
        held: &Held,
        member: &zip::Member,
    ) -> Result<Vec<u8>, SourceError> {
        let zip_err = |e: zip::ZipError| SourceError::Invalid {
            url: redact(url.as_str()),
            message: e.to_string(),
        };
        if member.compressed_size > zip::MAX_METADATA_BYTES {
            return Err(zip_err(zip::ZipError::TooLarge));
        }
        if let Some(at) = member.local_header_offset.checked_sub(held.start)
            && let Some(local) = usize::try_from(at).ok().and_then(|at| held.bytes.get(at..))
            && let Ok(bytes) = zip::read_member(local, member)
        {
            return Ok(bytes);
        }
        // The local header's name and extra field: their lengths are only
        // known once read, so the first read allows a generous extra.
        let mut len = 30 + 4096 + member.compressed_size;
        for _ in 0..2 {
            let local = self.range(url, member.local_header_offset, len).await?;
            match zip::read_member(&local, member) {
                Ok(bytes) => return Ok(bytes),
                Err(zip::ZipError::Truncated) if local.len() >= 30 => {
                    let name = u64::from(u16::from_le_bytes([local[26], local[27]]));
                    let extra = u64::from(u16::from_le_bytes([local[28], local[29]]));
                    len = 30 + name + extra + member.compressed_size;
                }
                Err(e) => return Err(zip_err(e)),
            }
        }
        Err(zip_err(zip::ZipError::Truncated))
    }

    /// What a read of a wheel's end came to: the whole wheel when the
    /// server ignored the range (checked against its sha256), else the
    /// bytes from `start` to the end with the zip directory found in them.
    /// Sizes come from the file: a directory past the wheel's end, or
    /// larger than any wheel's, is not read.
    fn wheel_tail(
        &self,
        url: &Url,
        file: &IndexFile,
        tail: Response,
    ) -> Result<WheelTail, SourceError> {
        let invalid = |message: String| SourceError::Invalid {
            url: redact(url.as_str()),
            message,
        };
        if tail.status == StatusCode::OK {
            self.check_hash(url, file, &tail.body)?;
            return Ok(WheelTail::Whole(tail.body));
        }
        if tail.status != StatusCode::PARTIAL_CONTENT {
            return Err(SourceError::Status {
                url: redact(url.as_str()),
                status: tail.status.as_u16(),
            });
        }
        let (start, total) = content_range(&tail.headers, tail.body.len())
            .map_err(|why| invalid(why.to_string()))?;
        let total = total
            .filter(|total| start.checked_add(tail.body.len() as u64) == Some(*total))
            .ok_or_else(|| invalid(WRONG_RANGE.to_string()))?;
        let dir = zip::find_directory(&tail.body, start).map_err(|e| invalid(e.to_string()))?;
        if dir.size > MAX_DIRECTORY_BYTES
            || dir
                .offset
                .checked_add(dir.size)
                .is_none_or(|end| end > total)
        {
            return Err(invalid(zip::ZipError::Truncated.to_string()));
        }
        Ok(WheelTail::Part {
            held: tail.body,
            start,
            total,
            dir,
        })
    }

    async fn range(&self, url: &Url, start: u64, len: u64) -> Result<Vec<u8>, SourceError> {
        let value = format!("bytes={start}-{}", start.saturating_add(len.max(1) - 1));
        // Only what was asked is read: a server that sends the whole wheel
        // now, after answering the first range, is refused, not followed.
        let response = self
            .get(Fetch::Range, url, range_header(&value), len.max(1))
            .await?;
        match response.status {
            StatusCode::PARTIAL_CONTENT => {
                check_content_range(&response.headers, start, response.body.len(), None).map_err(
                    |why| SourceError::Invalid {
                        url: redact(url.as_str()),
                        message: why.to_string(),
                    },
                )?;
                Ok(response.body)
            }
            StatusCode::OK => {
                let s = usize::try_from(start).unwrap_or(usize::MAX);
                let end = s
                    .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
                    .min(response.body.len());
                Ok(response.body.get(s..end).unwrap_or_default().to_vec())
            }
            status => Err(SourceError::Status {
                url: redact(url.as_str()),
                status: status.as_u16(),
            }),
        }
    }

    fn check_hash(&self, url: &Url, file: &IndexFile, body: &[u8]) -> Result<(), SourceError> {
        if let Some(expected) = &file.sha256 {
            let actual = hex_sha256(body);
            if &actual != expected {
                return Err(SourceError::HashMismatch {
                    url: redact(url.as_str()),
                    expected: expected.clone(),
                    actual,
                });
            }
        }
        Ok(())
    }
}

/// `n` bytes as a person reads them: `512 bytes`, `64 KiB`, `128 MiB`.
fn byte_count(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

const WRONG_RANGE: &str = "the server answered a byte range with other bytes than were asked for";

/// Where a 206 answer's `len` bytes start, by its `Content-Range`, and the
/// whole file's size when it says (`*` otherwise); an answer whose range
/// does not hold `len` bytes is refused.
fn content_range(headers: &HeaderMap, len: usize) -> Result<(u64, Option<u64>), &'static str> {
    let value = headers
        .get(header::CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .ok_or("a 206 answer without a usable Content-Range")?;
    let (range, of) = value
        .strip_prefix("bytes ")
        .and_then(|v| v.split_once('/'))
        .ok_or(WRONG_RANGE)?;
    let (first, last) = range.split_once('-').ok_or(WRONG_RANGE)?;
    let (first, last): (u64, u64) = (
        first.trim().parse().map_err(|_| WRONG_RANGE)?,
        last.trim().parse().map_err(|_| WRONG_RANGE)?,
    );
    let held = last
        .checked_sub(first)
        .and_then(|d| d.checked_add(1))
        .ok_or(WRONG_RANGE)?;
    if usize::try_from(held).ok() != Some(len) {
        return Err(WRONG_RANGE);
    }
    Ok((first, of.trim().parse().ok()))
}

/// Whether a 206 answer's `Content-Range` says it holds `len` bytes from
/// `start` (of `total`, when known): bytes from elsewhere in the wheel
/// would be read as the ones asked for.
fn check_content_range(
    headers: &HeaderMap,
    start: u64,
    len: usize,
    total: Option<u64>,
) -> Result<(), &'static str> {
    let (first, of) = content_range(headers, len)?;
    if first != start || total.is_some_and(|total| of != Some(total)) {
        return Err(WRONG_RANGE);
    }
    Ok(())
}

/// A page fetched over HTTP links only to HTTP(S) files: a `file://` (or
/// any other scheme) there would make us read this machine's files. Local
/// indexes and find-links directories may use `file:`.
fn check_schemes(url: &Url, files: &PageLines) -> Result<(), SourceError> {
    if matches!(url.scheme(), "http" | "https")
        && let Some((filename, link)) = files.first_local()
    {
        return Err(SourceError::Invalid {
            url: redact(url.as_str()),
            message: format!(
                "the page links {filename} to `{}`, which is not an HTTP(S) URL; a remote index may not point at local files",
                redact(&link)
            ),
        });
    }
    Ok(())
}

/// How much of a wheel's end to read first: its zip directory and, usually,
/// the .dist-info members just before it. Large wheels hold many files, so
/// their directory is larger; a bigger first read saves a round trip, which
/// costs more than the extra bytes.
fn tail_len(size: Option<u64>) -> u64 {
    const MIN: u64 = 64 * 1024;
    const MAX: u64 = 256 * 1024;
    size.map_or(MIN, |size| (size / 64).clamp(MIN, MAX))
}

fn range_header(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(value) {
        headers.insert(header::RANGE, v);
    }
    // Compression would make byte ranges meaningless.
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    headers
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Parse a PEP 503 name for a lookup, for callers holding strings.
pub fn package_name(name: &str) -> Option<PackageName> {
    PackageName::from_str(name).ok()
}

/// Largest project page or JSON API answer read (the largest real pages
/// are tens of MiB).
const MAX_PAGE_BYTES: u64 = 128 * 1024 * 1024;

/// Most older versions of a project fetched ahead at once after its
/// versions keep being rejected.
const MAX_OLDER: usize = 8;

/// Most bytes ahead of a zip directory read on the guess that METADATA is
/// there.
const MAX_DIST_INFO_GUESS: u64 = 4 * 1024 * 1024;

/// Largest zip directory read: the largest real wheels (torch) hold a few
/// megabytes of it.
const MAX_DIRECTORY_BYTES: u64 = 64 * 1024 * 1024;

/// Bounds of a learnt first read of a project's wheels.
const MIN_TAIL_HINT: u64 = 8 * 1024;
const MAX_TAIL_HINT: u64 = 8 * 1024 * 1024;

/// Besides RECORD, what may lie between METADATA and the zip directory
/// when the .dist-info comes last.
const NEAR_END_SLACK: u64 = 64 * 1024;

/// How far into a wheel a METADATA may lie to be read with its end.
const MAX_HEAD: u64 = 1024 * 1024;

/// Most bytes spent on guessed metadata of one project. Guesses about a
/// project of small wheels are cheap and many; about one whose every
/// version takes megabytes to read, a few: the rest would only slow down
/// what the resolver is waiting for.
const MAX_GUESS_BYTES: u64 = 8 * 1024 * 1024;

/// Largest wheel read whole when the page does not give its size.
const MAX_WHEEL_BYTES: u64 = 8 * 1024 * 1024 * 1024;

/// `file`'s URL, parsed, and how an error about it is worded.
fn parsed_url(file: &IndexFile) -> Result<(Url, impl Fn(String) -> SourceError), SourceError> {
    let url = Url::parse(&file.url).map_err(|e| SourceError::Invalid {
        url: redact(&file.url),
        message: e.to_string(),
    })?;
    let shown = redact(url.as_str());
    let invalid = move |message: String| SourceError::Invalid {
        url: shown.clone(),
        message,
    };
    Ok((url, invalid))
}

/// A find-links file read whole: a regular file of at most `limit` bytes
/// (a FIFO or device named like a distribution must not hang the read).
fn local_file(url: &Url, limit: u64, what: &str) -> Result<Vec<u8>, SourceError> {
    let invalid = |message: String| SourceError::Invalid {
        url: url.as_str().to_string(),
        message,
    };
    let path = url
        .to_file_path()
        .map_err(|()| invalid("not a local path".to_string()))?;
    if !fs_err::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= limit) {
        return Err(invalid(format!("not a regular file of {what}'s size")));
    }
    fs_err::read(&path).map_err(|e| SourceError::Other {
        message: e.to_string(),
    })
}

/// The largest source distribution read whole for its metadata: a local
/// one, or one named by `--read-whole-sdist`.
const MAX_SDIST_BYTES: u64 = 512 * 1024 * 1024;

/// The wait before retry `attempt + 1`: exponential backoff, unless the
/// server's Retry-After (already bounded: a server asking for an hour is
/// an error) asks for longer.
async fn wait_to_retry(attempt: u32, asked: Option<Duration>) {
    let backoff = Duration::from_millis(200 * (1 << (attempt - 1).min(5)));
    tokio::time::sleep(asked.map_or(backoff, |a| a.max(backoff))).await;
}

/// The most of an sdist's archive (compressed) downloaded for its metadata
/// files, and the largest archive read whole when they lie at its end.
/// Nearly every sdist is smaller; a setup.py-only one of 19 MiB (jieba's,
/// its dictionaries ahead of setup.py) is read to its end.
const MAX_SDIST_READ: u64 = 32 << 20;

/// How far into a `.tar.gz` larger than [`MAX_SDIST_READ`] layerlock
/// reads: setuptools puts PKG-INFO (and the other top files whose names
/// sort first) at the archive's head, so a static PKG-INFO is still read,
/// but a setup.py behind a tree of hundreds of megabytes (pyspark's, 434
/// MiB) is not fetched to learn what only it would say. The refusal says
/// so, and the walk-back rule takes it from there.
const LARGE_SDIST_HEAD: u64 = 4 << 20;

/// The most of a `.tar.gz` sdist of `total` bytes (when known) read.
fn sdist_read_cap(total: Option<u64>) -> u64 {
    match total {
        Some(total) if total > MAX_SDIST_READ => LARGE_SDIST_HEAD,
        _ => MAX_SDIST_READ,
    }
}

/// How many pieces of a body may wait for the archive reader: enough to
/// keep the network busy while it inflates, few enough that little is
/// downloaded past where it stops.
const PIECES_AHEAD: usize = 8;

/// How one streamed GET ended when it did not give an answer.
enum Streamed {
    /// A fault worth another try (why, and the server's Retry-After).
    Passing(String, Option<Duration>),
    Failed(SourceError),
}

/// What [`feed`] sent.
struct Fed {
    bytes: u64,
    /// The body's sha256, when it was read to its end.
    sha256: Option<String>,
    /// Why the connection failed, when it did.
    failed: Option<String>,
}

/// Hand `response`'s body to the archive reader behind `tx` until it ends,
/// the reader stops (it drops its end) or its cap ([`sdist_read_cap`], or
/// [`MAX_SDIST_BYTES`] read `whole`) is reached.
/// Each wait for a piece is bounded by the client's read timeout.
async fn feed(
    mut response: reqwest::Response,
    tx: tokio::sync::mpsc::Sender<sdist::Piece>,
    size: Option<u64>,
    whole: bool,
) -> Fed {
    use sha2::Digest;
    let total = response.content_length().or(size);
    let cap = match whole {
        true => MAX_SDIST_BYTES,
        false => sdist_read_cap(total),
    };
    let mut hasher = sha2::Sha256::new();
    let mut fed = Fed {
        bytes: 0,
        sha256: None,
        failed: None,
    };
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => {
                fed.sha256 = Some(crate::cache::hex_digest(&hasher.finalize()));
                return fed;
            }
            Err(e) => {
                let why = e.without_url().to_string();
                fed.failed = Some(why.clone());
                let _ = tx.send(sdist::Piece::Failed(why)).await;
                return fed;
            }
        };
        let room = usize::try_from(cap - fed.bytes).unwrap_or(usize::MAX);
        let piece = &chunk[..chunk.len().min(room)];
        fed.bytes += piece.len() as u64;
        hasher.update(piece);
        if tx.send(sdist::Piece::Bytes(piece.to_vec())).await.is_err() {
            // The reader has its answer.
            return fed;
        }
        if piece.len() < chunk.len() {
            let reached = sdist::CapReached { cap, total };
            let _ = tx.send(sdist::Piece::Cap(reached)).await;
            return fed;
        }
    }
}

/// What the metadata of an sdist whose dependencies are dynamic is kept
/// as (then why): no METADATA starts so.
const DYNAMIC: &[u8] = b"\0layerlock-dynamic\n";

/// The cache key of an sdist's answer: its own key (its sha256 when the
/// index gives one) under the number of the reader's rules
/// ([`layerlock_dist::SOURCE_READER_VERSION`]), so no answer of older rules
/// is read from the cache. Numbers up to 4 were this crate's own `sdist-N`.
fn sdist_key(file_key: &str) -> String {
    format!("sdist-{}-{file_key}", layerlock_dist::SOURCE_READER_VERSION)
}

/// The body, or `None` when it runs past `limit` bytes (read no further).
async fn read_capped(
    mut response: reqwest::Response,
    limit: u64,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    // Sized once when the server says how much is coming (growing by
    // doubling would hold up to twice a large page); what it says is not
    // trusted past a size real pages reach.
    const TRUSTED: u64 = 32 * 1024 * 1024;
    let expected = response
        .content_length()
        .unwrap_or(0)
        .min(limit)
        .min(TRUSTED);
    let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// Longest wait a `Retry-After` header is obeyed for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// `Retry-After: <seconds>` of a 429 or 503 (RFC 9110 §10.2.3), capped at
/// [`MAX_RETRY_AFTER`]. The HTTP-date form falls back to our own backoff.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    let seconds: u64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_range(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_RANGE, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn a_large_sdist_is_read_only_at_its_head() {
        // Read whole up to the cap (jieba's 19 MiB, its setup.py last).
        assert_eq!(sdist_read_cap(Some(19 << 20)), MAX_SDIST_READ);
        assert_eq!(sdist_read_cap(Some(MAX_SDIST_READ)), MAX_SDIST_READ);
        assert_eq!(sdist_read_cap(None), MAX_SDIST_READ);
        // pyspark's 434 MiB: its head only, where PKG-INFO lies.
        assert_eq!(sdist_read_cap(Some(434 << 20)), LARGE_SDIST_HEAD);
        assert_eq!(sdist_read_cap(Some(MAX_SDIST_READ + 1)), LARGE_SDIST_HEAD);
    }

    #[test]
    fn a_byte_range_must_be_the_one_asked_for() {
        assert_eq!(
            check_content_range(&with_range("bytes 100-199/1000"), 100, 100, Some(1000)),
            Ok(())
        );
        assert_eq!(
            check_content_range(&with_range("bytes 100-199/*"), 100, 100, None),
            Ok(())
        );
        for (value, start, len, total) in [
            ("bytes 0-99/1000", 100, 100, Some(1000)),
            ("bytes 100-149/1000", 100, 100, Some(1000)),
            ("bytes 100-199/999", 100, 100, Some(1000)),
            ("bytes 199-100/1000", 100, 100, None),
            ("bytes 100-/1000", 100, 100, None),
            ("items 100-199/1000", 100, 100, None),
            ("bytes 100-18446744073709551615/1000", 100, 100, None),
        ] {
            assert!(
                check_content_range(&with_range(value), start, len, total).is_err(),
                "{value}"
            );
        }
        assert!(check_content_range(&HeaderMap::new(), 0, 1, None).is_err());
    }

    #[test]
    fn byte_counts_read_as_a_person_reads_them() {
        assert_eq!(byte_count(512), "512 bytes");
        assert_eq!(byte_count(64 * 1024), "64 KiB");
        assert_eq!(byte_count(128 * 1024 * 1024), "128 MiB");
        assert_eq!(byte_count(1500), "1500 bytes");
    }
}
