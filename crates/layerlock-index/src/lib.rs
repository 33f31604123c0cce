//! The package index client: PEP 691 JSON and PEP 503 HTML simple indexes,
//! `--find-links` directories, PEP 658 metadata, HTTP range requests into
//! wheels, credentials, retries and a persistent cache.

mod auth;
mod cache;
mod client;
mod find_links;
mod page;
mod zip;

pub use auth::{SecretUrl, redact, redact_text};
pub use client::{ClientError, IndexClient, IndexConfig, Progress, Speculator, package_name};
