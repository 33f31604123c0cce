//! What a run fetched and when: requests and bytes by kind, what the cache
//! answered, how long the resolver waited on the network, and when each
//! project's page and metadata arrived. `compile --stats` writes it out.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use uv_normalize::PackageName;

/// The kinds of request the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fetch {
    /// A project page (PEP 503/691).
    Page,
    /// A PEP 658 `.metadata` file.
    Metadata,
    /// A byte range of a wheel (its zip directory or METADATA member).
    Range,
    /// A whole wheel, from a server that ignores ranges.
    Wheel,
    /// The PyPI JSON API, for upload times a page lacks.
    JsonApi,
    /// A whole source distribution, for the files that hold its metadata.
    Sdist,
}

impl Fetch {
    pub fn name(self) -> &'static str {
        match self {
            Self::Page => "page",
            Self::Metadata => "metadata",
            Self::Range => "range",
            Self::Wheel => "wheel",
            Self::JsonApi => "json-api",
            Self::Sdist => "sdist",
        }
    }
}

/// Requests of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Traffic {
    /// Sent, retries included.
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Summed over requests: from sending to the whole body.
    pub busy: Duration,
    /// The longest request.
    pub slowest: Duration,
}

/// When a project's answers arrived, from the client's start.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Arrivals {
    pub page: Option<Duration>,
    /// The last metadata read for the project (speculative reads included).
    pub metadata: Option<Duration>,
}

/// Per host, how many DNS lookups a client made and how many connections
/// it opened (each new connection asks the resolver; a pooled one does
/// not). Hosts given as IP addresses are never resolved and not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCounts {
    pub lookups: u64,
    pub connections: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FetchStats {
    pub traffic: BTreeMap<Fetch, Traffic>,
    /// Pages served from the cache: offline, or unchanged (HTTP 304).
    pub pages_cached: u64,
    /// Metadata read from the cache.
    pub metadata_cached: u64,
    /// Times the resolver asked for something not yet there, and how long
    /// it waited in all.
    pub waits: u64,
    pub waited: Duration,
    /// The longest waits, longest first, with what was waited for.
    pub longest_waits: Vec<(String, Duration)>,
    pub arrivals: BTreeMap<PackageName, Arrivals>,
    /// By host name: its DNS lookups and new connections.
    pub hosts: BTreeMap<String, HostCounts>,
}

/// Collects [`FetchStats`] as the client works.
pub(crate) struct Recorder {
    start: Instant,
    stats: Mutex<FetchStats>,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Self {
            start: Instant::now(),
            stats: Mutex::default(),
        }
    }

    fn with(&self, f: impl FnOnce(&mut FetchStats)) {
        if let Ok(mut stats) = self.stats.lock() {
            f(&mut stats);
        }
    }

    pub(crate) fn request(&self, kind: Fetch, bytes: usize, busy: Duration) {
        self.with(|s| {
            let traffic = s.traffic.entry(kind).or_default();
            traffic.requests += 1;
            traffic.bytes += bytes as u64;
            traffic.busy += busy;
            traffic.slowest = traffic.slowest.max(busy);
        });
    }

    pub(crate) fn page_cached(&self) {
        self.with(|s| s.pages_cached += 1);
    }

    pub(crate) fn metadata_cached(&self) {
        self.with(|s| s.metadata_cached += 1);
    }

    pub(crate) fn waited(&self, what: impl FnOnce() -> String, waited: Duration) {
        const KEPT: usize = 10;
        self.with(|s| {
            s.waits += 1;
            s.waited += waited;
            if s.longest_waits.len() < KEPT
                || s.longest_waits.last().is_some_and(|(_, w)| *w < waited)
            {
                s.longest_waits.push((what(), waited));
                s.longest_waits
                    .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                s.longest_waits.truncate(KEPT);
            }
        });
    }

    pub(crate) fn page_arrived(&self, name: &PackageName) {
        let at = self.start.elapsed();
        self.with(|s| s.arrivals.entry(name.clone()).or_default().page = Some(at));
    }

    pub(crate) fn metadata_arrived(&self, name: &PackageName) {
        let at = self.start.elapsed();
        self.with(|s| {
            let slot = &mut s.arrivals.entry(name.clone()).or_default().metadata;
            *slot = Some(slot.map_or(at, |seen| seen.max(at)));
        });
    }

    pub(crate) fn snapshot(&self) -> FetchStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }
}
