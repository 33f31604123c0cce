//! The `simple_json`, `simple_html`, `wheel_zip` and `page_lines` targets:
//! what an index or a wheel server sends back, read by layerlock-index; the
//! core metadata read by layerlock-dist; and the cache's lines of a page.
//!

use std::hint::black_box;
use std::str::FromStr;
use std::sync::Arc;

use layerlock_dist::{Body, CoreMetadata, IndexFile, PageLines};
use url::Url;
use uv_normalize::PackageName;

use layerlock_index::wheel as zip;
use layerlock_index::{parse_html, parse_json};

/// The page the files are listed on; relative links are joined to it.
const PAGE_URL: &str = "https://pypi.example/simple/foo-bar/";
const PROJECT: &str = "foo-bar";

/// The client asks for the last 64 KiB first; a short tail makes the
/// central directory fall outside it, which takes the second range request.
const TAILS: &[usize] = &[64 * 1024, 256];

pub fn simple_json(data: &[u8]) {
    let Some((page_url, project)) = page_and_project() else {
        return;
    };
    match parse_json(&page_url, data, "fuzz-index") {
        Ok(files) => use_files(&files, &project),
        Err(error) => crate::render_error(&error),
    }
}

pub fn simple_html(data: &[u8]) {
    let Some((page_url, project)) = page_and_project() else {
        return;
    };
    use_files(&parse_html(&page_url, data, "fuzz-index"), &project);
}

pub fn wheel_zip(data: &[u8]) {
    // The whole wheel in memory: find-links files, servers without ranges.
    match zip::metadata_from_wheel(data) {
        Ok(metadata) => core_metadata(&metadata),
        Err(error) => crate::render_error(&error),
    }
    for tail in TAILS {
        match by_range(data, *tail) {
            Ok(metadata) => core_metadata(&metadata),
            Err(error) => crate::render_error(&error),
        }
    }
    // A PEP 658 `.metadata` file is the METADATA text alone.
    core_metadata(data);
}

/// The cache's lines of a page: sorted into versions behind an index, every
/// file read. A file that reads back must write the line it came from
/// (less escapes): the cache stores what it reads. The same text read as
/// an index (a cache entry someone edited) must not panic either.
pub fn page_lines(data: &[u8]) {
    let Ok(project) = PackageName::from_str(PROJECT) else {
        return;
    };
    let text = crate::text(data).into_owned();
    // As an index and its body: the first line's count of versions says
    // where the index ends.
    let versions = text
        .split(['\t', '\n'])
        .next()
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(versions) = versions {
        let end = text
            .match_indices('\n')
            .nth(versions.min(text.len()))
            .map_or(text.len(), |(at, _)| at + 1);
        let body = Body::Bytes(text.as_bytes()[end..].to_vec());
        if let Some(indexed) =
            PageLines::read(text[..end].to_string(), body, Arc::from("fuzz-index"))
        {
            black_box(indexed.first_local());
            for i in 0..indexed.len() + 1 {
                black_box(indexed.file(i));
            }
        }
    }
    let Some(lines) = PageLines::from_lines(&text, &project, Arc::from("fuzz-index")) else {
        return;
    };
    let body = Body::Bytes(lines.body().unwrap_or_default().to_vec());
    let reread = PageLines::read(lines.index().to_string(), body, Arc::from("fuzz-index"));
    assert!(reread.is_some(), "an index as written does not read back");
    black_box(lines.first_local());
    for indexes in lines.versions().values() {
        for i in indexes.clone() {
            black_box(lines.file(i as usize));
        }
    }
    let files: Vec<IndexFile> = (0..lines.len()).filter_map(|i| lines.file(i)).collect();
    let again = PageLines::from_files(&files, &project, Arc::from("fuzz-index"));
    let Some(again) = again else {
        panic!("files read from lines do not write lines that read back");
    };
    let reread: Vec<IndexFile> = (0..again.len()).filter_map(|i| again.file(i)).collect();
    assert_eq!(reread, files, "a file changed on its way through the cache");
}

fn page_and_project() -> Option<(Url, PackageName)> {
    Some((
        Url::parse(PAGE_URL).ok()?,
        PackageName::from_str(PROJECT).ok()?,
    ))
}

/// What the resolver reads of each listed file.
fn use_files(files: &[IndexFile], project: &PackageName) {
    for file in files {
        black_box(file.kind(project));
        black_box(file.requires_python.as_ref().map(ToString::to_string));
        black_box(file.upload_time.map(|time| time.to_string()));
        black_box((&file.url, &file.sha256, &file.yanked, &file.core_metadata));
    }
}

/// The client's ranged read (`metadata_by_range`), with `data` as the whole
/// file and slices of it as the answers to each range request.
fn by_range(data: &[u8], tail: usize) -> Result<Vec<u8>, zip::ZipError> {
    let start = data.len().saturating_sub(tail);
    let tail_start = start as u64;
    let directory = zip::find_directory(&data[start..], tail_start)?;
    let directory_bytes = range(data, directory.offset, directory.size);
    let member = zip::find_metadata(directory_bytes)?;
    let want = zip::LOCAL_SLACK.saturating_add(member.compressed_size);
    let local = range(data, member.local_header_offset, want);
    zip::read_member(local, &member)
}

/// Bytes `start..start + len` of the file, cut at its end as a server would.
fn range(data: &[u8], start: u64, len: u64) -> &[u8] {
    let start = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
    let end = start
        .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
        .min(data.len());
    &data[start..end]
}

/// What the resolver reads of a wheel's METADATA.
fn core_metadata(bytes: &[u8]) {
    match CoreMetadata::parse(bytes) {
        Ok(metadata) => {
            black_box(metadata.name.to_string());
            black_box(metadata.version.to_string());
            for requirement in metadata.requires_all() {
                black_box(requirement.to_string());
                black_box(requirement.marker.try_to_string());
            }
            black_box(metadata.requires_python.as_ref().map(ToString::to_string));
            black_box((&metadata.provides_extra, &metadata.unreadable));
        }
        Err(error) => crate::render_error(&error),
    }
}

/// A source distribution's archive: the bytes as a tar stream (gzipped
/// here first, so the tar reader meets the fuzzer's bytes), as a raw
/// `.tar.gz` (for the gzip layer) and as a `.zip`; whatever files come
/// out go through the choice of metadata and the METADATA reader. The
/// bytes also stand for each of PKG-INFO, pyproject.toml and setup.cfg.
pub fn sdist_archive(data: &[u8]) {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let tar_gz = gz.write_all(data).ok().and_then(|()| gz.finish().ok());
    let archives = [
        ("a-1.tar.gz", tar_gz.unwrap_or_default()),
        ("a-1.tar.gz", data.to_vec()),
        ("a-1.zip", data.to_vec()),
    ];
    for (name, bytes) in &archives {
        match layerlock_index::sdist::source_files(name, bytes) {
            Ok(files) => source_metadata(&files),
            Err(error) => crate::render_error(&error),
        }
    }
    let text = Some(data.to_vec());
    for files in [
        layerlock_dist::SourceFiles {
            pkg_info: text.clone(),
            ..Default::default()
        },
        layerlock_dist::SourceFiles {
            pyproject: text.clone(),
            ..Default::default()
        },
        layerlock_dist::SourceFiles {
            setup_cfg: text.clone(),
            setup_py: Some(b"setup()".to_vec()),
            ..Default::default()
        },
    ] {
        source_metadata(&files);
    }
}

/// The metadata an sdist's files give, read as layerlock reads it.
fn source_metadata(files: &layerlock_dist::SourceFiles) {
    match layerlock_dist::sdist_metadata(files, "a", "1") {
        Ok(metadata) => core_metadata(&metadata),
        Err(why) => {
            std::hint::black_box(why);
        }
    }
}
