//! The package index client: PEP 691 JSON and PEP 503 HTML simple indexes,
//! `--find-links` directories, PEP 658 metadata, HTTP range requests into
//! wheels, credentials, retries and a persistent cache.

mod auth;
mod cache;
pub use cache::unusable as cache_unusable;
mod client;
mod dns;
mod find_links;
mod page;
pub mod sdist;
mod stats;
mod zip;

pub use auth::{SecretUrl, holds_secret, redact, redact_text};
/// The readers of what an index sends, for the fuzz targets.
pub use page::{PageError, parse_html, parse_json};
/// The wheel (zip) readers behind metadata by range, for the fuzz targets.
pub mod wheel {
    pub use crate::zip::{
        LOCAL_SLACK, ZipError, find_directory, find_metadata, metadata_from_wheel, read_member,
    };
}
pub use client::{
    Ahead, Aimed, ClientError, ClientSettings, Expander, IndexClient, IndexConfig, Progress,
    Speculator, package_name,
};
pub use stats::{Arrivals, Fetch, FetchStats, HostCounts, Traffic};
