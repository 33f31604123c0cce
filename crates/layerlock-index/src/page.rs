//! Reading a project page of a simple index: PEP 691 JSON or PEP 503 HTML
//! (with PEP 592 yanking, PEP 658/714 metadata and PEP 700 upload times).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::str::FromStr;

use jiff::Timestamp;
use serde::Deserialize;
use url::Url;
use uv_pep440::VersionSpecifiers;

use layerlock_dist::{IndexFile, sha256_digest};

pub const JSON_TYPE: &str = "application/vnd.pypi.simple.v1+json";

/// The Accept header: JSON first, HTML for the many mirrors that only
/// serve HTML (pypiserver, devpi, Artifactory).
pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("invalid JSON project page: {0}")]
    Json(String),
}

#[derive(Deserialize)]
struct JsonMeta {
    #[serde(rename = "api-version", default)]
    api_version: Option<String>,
}

/// One file of a JSON page, borrowing from the page where it can: a large
/// page is read one file at a time, never held twice.
#[derive(Deserialize)]
struct JsonFile<'a> {
    #[serde(borrow)]
    filename: Cow<'a, str>,
    #[serde(borrow)]
    url: Cow<'a, str>,
    /// Every algorithm's value must be a string, as PEP 691 says.
    #[serde(default, borrow)]
    hashes: BTreeMap<Cow<'a, str>, Cow<'a, str>>,
    #[serde(rename = "requires-python", default, borrow)]
    requires_python: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    yanked: Option<Flag<'a>>,
    #[serde(rename = "upload-time", default, borrow)]
    upload_time: Option<Cow<'a, str>>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(rename = "core-metadata", default, borrow)]
    core_metadata: Option<Offer<'a>>,
    #[serde(rename = "dist-info-metadata", default, borrow)]
    dist_info_metadata: Option<Offer<'a>>,
}

/// A value that may or may not be a string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Text<'a> {
    Str(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

/// `yanked`: a flag or a reason.
#[derive(Deserialize)]
#[serde(untagged)]
enum Flag<'a> {
    Set(bool),
    Reason(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

/// PEP 658/714 metadata: offered or not, or offered with its hashes.
#[derive(Deserialize)]
#[serde(untagged)]
enum Offer<'a> {
    Set(bool),
    Hashes(#[serde(borrow)] BTreeMap<Cow<'a, str>, Text<'a>>),
    Other(serde::de::IgnoredAny),
}

fn metadata_offer(value: Option<&Offer>) -> Option<Option<String>> {
    match value? {
        Offer::Set(true) => Some(None),
        Offer::Hashes(hashes) => Some(match hashes.get("sha256") {
            Some(Text::Str(digest)) => sha256_digest(digest),
            _ => None,
        }),
        Offer::Set(false) | Offer::Other(_) => None,
    }
}

fn requires_python(text: Option<&str>) -> Option<VersionSpecifiers> {
    // An unreadable requires-python is ignored rather than failing the page,
    // as pip and uv do.
    text.filter(|t| !t.trim().is_empty())
        .and_then(|t| VersionSpecifiers::from_str(t).ok())
}

/// Split `#sha256=…` off a file URL.
fn split_fragment(mut url: Url) -> (Url, Option<String>) {
    let hash = url.fragment().and_then(|f| {
        f.split('&')
            .find_map(|part| part.strip_prefix("sha256="))
            .and_then(sha256_digest)
    });
    url.set_fragment(None);
    (url, hash)
}

pub fn parse_json(
    page_url: &Url,
    body: &[u8],
    listed_by: &str,
) -> Result<Vec<IndexFile>, PageError> {
    let mut out = Vec::new();
    for_each_json_file(page_url, body, listed_by, |file| out.push(file))?;
    Ok(out)
}

/// Each file of a PEP 691 JSON page, in order, handed to `each` as it is
/// read: the page is never held a second time as a list of files.
pub fn for_each_json_file(
    page_url: &Url,
    body: &[u8],
    listed_by: &str,
    mut each: impl FnMut(IndexFile),
) -> Result<(), PageError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let reader = PageReader {
        page_url,
        listed_by,
        each: &mut each,
    };
    let api_version = serde::Deserializer::deserialize_map(&mut deserializer, reader)
        .and_then(|version| deserializer.end().map(|()| version))
        .map_err(|e| PageError::Json(e.to_string()))?;
    // PEP 691: a client must refuse a major version it does not know.
    if let Some(version) = api_version
        && version.split('.').next() != Some("1")
    {
        return Err(PageError::Json(format!(
            "the index speaks simple API version {version}; layerlock reads version 1"
        )));
    }
    Ok(())
}

/// Reads a JSON page's top level: `meta` for its API version, `files` one
/// at a time.
struct PageReader<'p, F> {
    page_url: &'p Url,
    listed_by: &'p str,
    each: &'p mut F,
}

impl<'de, F: FnMut(IndexFile)> serde::de::Visitor<'de> for PageReader<'_, F> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a PEP 691 project page")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut api_version = None;
        let (mut meta, mut files) = (false, false);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "meta" => {
                    if meta {
                        return Err(serde::de::Error::duplicate_field("meta"));
                    }
                    meta = true;
                    let value: Option<JsonMeta> = map.next_value()?;
                    api_version = value.and_then(|m| m.api_version);
                }
                "files" => {
                    if files {
                        return Err(serde::de::Error::duplicate_field("files"));
                    }
                    files = true;
                    map.next_value_seed(FilesReader {
                        page_url: self.page_url,
                        listed_by: self.listed_by,
                        each: &mut *self.each,
                    })?;
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        if !files {
            return Err(serde::de::Error::missing_field("files"));
        }
        Ok(api_version)
    }
}

/// Reads a JSON page's `files` array, handing each on.
struct FilesReader<'p, F> {
    page_url: &'p Url,
    listed_by: &'p str,
    each: &'p mut F,
}

impl<'de, F: FnMut(IndexFile)> serde::de::DeserializeSeed<'de> for FilesReader<'_, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(IndexFile)> serde::de::Visitor<'de> for FilesReader<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of files")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // Pages repeat one requires-python for many files: parse it once.
        let mut specifiers: Option<(String, Option<VersionSpecifiers>)> = None;
        while let Some(file) = seq.next_element::<JsonFile>()? {
            let Ok(url) = self.page_url.join(&file.url) else {
                continue;
            };
            let (url, fragment_hash) = split_fragment(url);
            let requires_python = match file.requires_python.as_deref() {
                None => None,
                Some(text) => match &specifiers {
                    Some((seen, parsed)) if seen == text => parsed.clone(),
                    _ => {
                        let parsed = requires_python(Some(text));
                        specifiers = Some((text.to_string(), parsed.clone()));
                        parsed
                    }
                },
            };
            (self.each)(IndexFile {
                sha256: file
                    .hashes
                    .get("sha256")
                    .and_then(|h| sha256_digest(h))
                    .or(fragment_hash),
                requires_python,
                yanked: match file.yanked {
                    Some(Flag::Set(true)) => Some(String::new()),
                    Some(Flag::Reason(reason)) => Some(reason.into_owned()),
                    _ => None,
                },
                upload_time: file
                    .upload_time
                    .as_deref()
                    .and_then(|t| Timestamp::from_str(t).ok()),
                size: file.size,
                core_metadata: metadata_offer(file.core_metadata.as_ref())
                    .or_else(|| metadata_offer(file.dist_info_metadata.as_ref())),
                filename: file.filename.into_owned(),
                url: url.to_string(),
                listed_by: self.listed_by.to_string(),
            });
        }
        Ok(())
    }
}

/// Undo HTML character references in attribute values and text.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let Some(semi) = after.find(';').filter(|s| *s <= 10) else {
            out.push('&');
            rest = after;
            continue;
        };
        let entity = &after[..semi];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Attributes of one start tag, names lower-cased.
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let bytes = tag.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'=' {
            i += 1;
        }
        if start == i {
            break;
        }
        let name = tag[start..i].to_ascii_lowercase();
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            let value = if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let quote = bytes[i];
                i += 1;
                let vstart = i;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
                let v = &tag[vstart..i.min(tag.len())];
                i += 1;
                v
            } else {
                let vstart = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                &tag[vstart..i]
            };
            out.push((name, unescape(value)));
        } else {
            out.push((name, String::new()));
        }
    }
    out
}

pub fn parse_html(page_url: &Url, body: &[u8], listed_by: &str) -> Vec<IndexFile> {
    let text = String::from_utf8_lossy(body);
    let lower = text.to_ascii_lowercase();
    // PEP 503 allows a <base href> that file links are relative to.
    let mut base = page_url.clone();
    if let Some(at) = lower.find("<base ")
        && let Some(end) = lower[at..].find('>')
    {
        let attrs = attributes(&text[at + 5..at + end]);
        if let Some((_, href)) = attrs.iter().find(|(n, _)| n == "href")
            && let Ok(u) = page_url.join(href)
        {
            base = u;
        }
    }
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(found) = lower[pos..].find("<a") {
        let start = pos + found;
        let Some(tag_end) = lower[start..].find('>').map(|e| start + e) else {
            break;
        };
        let after_name = lower.as_bytes().get(start + 2).copied().unwrap_or(b'>');
        if !(after_name.is_ascii_whitespace() || after_name == b'>') {
            pos = start + 2;
            continue;
        }
        let attrs = attributes(&text[start + 2..tag_end]);
        let close = lower[tag_end..]
            .find("</a")
            .map_or(lower.len(), |c| tag_end + c);
        let inner = unescape(text[tag_end + 1..close].trim());
        pos = close;
        let get = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        let Some(href) = get("href") else { continue };
        let Ok(url) = base.join(href) else { continue };
        let (url, hash) = split_fragment(url);
        let filename = url
            .path_segments()
            .and_then(|mut s| s.next_back().map(str::to_string))
            .map(|s| percent_decode(&s))
            .filter(|s| !s.is_empty())
            .unwrap_or(inner);
        let metadata = get("data-core-metadata").or_else(|| get("data-dist-info-metadata"));
        let core_metadata = match metadata {
            None | Some("false") => None,
            Some(v) => Some(v.strip_prefix("sha256=").and_then(sha256_digest)),
        };
        out.push(IndexFile {
            filename,
            url: url.to_string(),
            sha256: hash,
            requires_python: requires_python(get("data-requires-python")),
            yanked: get("data-yanked").map(str::to_string),
            upload_time: None,
            size: None,
            core_metadata,
            listed_by: listed_by.to_string(),
        });
    }
    out
}

/// Undo `%XX` escapes (file names in links, user-info in URLs).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&text[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_page_with_pep_658_and_yanked() {
        let url = Url::parse("https://h/simple/foo/").unwrap();
        let body = br#"<html><body>
<a href="../../files/foo-1.0-py3-none-any.whl#sha256=ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB" data-requires-python="&gt;=3.8" data-dist-info-metadata="sha256=efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef">foo-1.0-py3-none-any.whl</a><br/>
<a href="https://cdn/foo-0.9.tar.gz" data-yanked="broken">foo-0.9.tar.gz</a>
</body></html>"#;
        let files = parse_html(&url, body, "idx");
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].url, "https://h/files/foo-1.0-py3-none-any.whl");
        assert_eq!(
            files[0].sha256.as_deref(),
            Some("abababababababababababababababababababababababababababababababab")
        );
        assert_eq!(
            files[0].core_metadata,
            Some(Some(
                "efefefefefefefefefefefefefefefefefefefefefefefefefefefefefefefef".to_string()
            ))
        );
        assert_eq!(
            files[0].requires_python.as_ref().unwrap().to_string(),
            ">=3.8"
        );
        assert_eq!(files[1].yanked.as_deref(), Some("broken"));
    }

    #[test]
    fn json_page() {
        let url = Url::parse("https://h/simple/foo/").unwrap();
        let body = br#"{"meta":{"api-version":"1.1"},"name":"foo","files":[
{"filename":"foo-1.0-py3-none-any.whl","url":"/files/foo-1.0-py3-none-any.whl","hashes":{"sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
 "requires-python":">=3.9","yanked":false,"upload-time":"2024-01-02T03:04:05.123456Z","core-metadata":{"sha256":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}]}"#;
        let files = parse_json(&url, body, "idx").unwrap();
        assert_eq!(files[0].url, "https://h/files/foo-1.0-py3-none-any.whl");
        assert!(files[0].upload_time.is_some());
        assert_eq!(
            files[0].core_metadata,
            Some(Some(
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb".to_string()
            ))
        );
    }

    #[test]
    fn a_hash_that_is_not_a_sha256_digest_is_no_hash() {
        // A hash value carrying a newline would become a live line in a
        // requirements lock (`--extra-index-url …`): it is dropped, and
        // the file then cannot be hash-pinned.
        let url = Url::parse("https://h/simple/foo/").unwrap();
        let body = br#"{"files":[
{"filename":"foo-1.0-py3-none-any.whl","url":"/f/foo-1.0-py3-none-any.whl","hashes":{"sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n--extra-index-url http://evil/simple"}},
{"filename":"foo-1.1-py3-none-any.whl","url":"/f/foo-1.1-py3-none-any.whl#sha256=abc","hashes":{}}]}"#;
        let files = parse_json(&url, body, "idx").unwrap();
        assert_eq!(files[0].sha256, None);
        assert_eq!(files[1].sha256, None);
    }

    #[test]
    fn json_flags_and_offers_in_every_form() {
        let url = Url::parse("https://h/simple/foo/").unwrap();
        let body = br#"{"files":[
{"filename":"a-1-py3-none-any.whl","url":"a","yanked":"bad \"build\"","core-metadata":true,"requires-python":">=3.8"},
{"filename":"b-1-py3-none-any.whl","url":"b","yanked":true,"dist-info-metadata":{"sha256":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"},"requires-python":">=3.8"},
{"filename":"c-1-py3-none-any.whl","url":"c","yanked":null,"core-metadata":false,"requires-python":"not a specifier","extra":[1,{"x":2}]},
{"filename":"d-1-py3-none-any.whl","url":"d","yanked":7,"core-metadata":"odd"}],"meta":{"api-version":"1.4"}}"#;
        let files = parse_json(&url, body, "idx").unwrap();
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].yanked.as_deref(), Some("bad \"build\""));
        assert_eq!(files[0].core_metadata, Some(None));
        assert_eq!(files[1].yanked.as_deref(), Some(""));
        assert_eq!(
            files[1].core_metadata,
            Some(Some("c".repeat(64))),
            "dist-info-metadata, the older name"
        );
        assert_eq!(
            files[1].requires_python.as_ref().unwrap().to_string(),
            ">=3.8"
        );
        assert_eq!(files[2].yanked, None);
        assert_eq!(files[2].core_metadata, None);
        assert!(files[2].requires_python.is_none());
        assert_eq!(files[3].yanked, None);
        assert_eq!(files[3].core_metadata, None);
    }

    #[test]
    fn json_pages_that_are_not_version_1_or_lack_files_are_refused() {
        let url = Url::parse("https://h/simple/foo/").unwrap();
        for (body, expect) in [
            // The version may come after the files: still refused.
            (
                &br#"{"files":[{"filename":"a-1.tar.gz","url":"a"}],"meta":{"api-version":"2.0"}}"#
                    [..],
                "version 2.0",
            ),
            (
                br#"{"meta":{"api-version":"1.0"}}"#,
                "missing field `files`",
            ),
            (br#"{"files":[],"files":[]}"#, "duplicate field `files`"),
            (br#"{"files":[]} trailing"#, "trailing"),
            (br#"{"files":[{"url":"a"}]}"#, "missing field `filename`"),
            (br#"[]"#, "invalid type"),
        ] {
            let err = parse_json(&url, body, "idx").unwrap_err().to_string();
            assert!(err.contains(expect), "{err}");
        }
    }

    #[test]
    fn json_hashes_and_offers_read_as_before_the_streaming_reader() {
        let url = Url::parse("https://h/simple/foo/").unwrap();
        let page = |file: &str| {
            format!(r#"{{"files":[{{"filename":"a-1-py3-none-any.whl","url":"a",{file}}}]}}"#)
        };
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        // Duplicate keys: the last wins.
        let files = parse_json(
            &url,
            page(&format!(r#""hashes":{{"sha256":"{a}","sha256":"{b}"}}"#)).as_bytes(),
            "idx",
        )
        .unwrap();
        assert_eq!(files[0].sha256.as_deref(), Some(b.as_str()));
        // A hash that is not a string, or hashes that are not a map: refused.
        for bad in [
            r#""hashes":{"sha256":null}"#.to_string(),
            r#""hashes":{"md5":5}"#.to_string(),
            format!(r#""hashes":["{a}"]"#),
        ] {
            assert!(
                parse_json(&url, page(&bad).as_bytes(), "idx").is_err(),
                "{bad}"
            );
        }
        // core-metadata: a list is no offer; a map without a string sha256
        // is an offer without a hash; duplicates: the last wins.
        for (offer, expect) in [
            (format!(r#""core-metadata":["{a}"]"#), None),
            (r#""core-metadata":{"sha256":5}"#.to_string(), Some(None)),
            (
                format!(r#""core-metadata":{{"sha256":"{a}","sha256":"{b}"}}"#),
                Some(Some(b.clone())),
            ),
        ] {
            let files = parse_json(&url, page(&offer).as_bytes(), "idx").unwrap();
            assert_eq!(files[0].core_metadata, expect, "{offer}");
        }
    }
}
