//! Index credentials: from the index URL's user-info or from netrc. They are
//! sent only to the host they belong to and never printed.

use std::collections::BTreeMap;
use std::path::Path;

use url::Url;

use crate::page::percent_decode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: Option<String>,
}

/// Credentials per host (`host` or `host:port`).
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    by_host: BTreeMap<String, Credentials>,
    default: Option<Credentials>,
}

fn host_key(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
}

/// An index URL that may carry credentials. Its `Display` and `Debug`
/// never show them; only [`SecretUrl::expose`] gives the URL itself, to
/// the code that connects with it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL as given, credentials included.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

impl std::fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretUrl({})", redact(&self.0))
    }
}

/// The URL with any user-info removed, safe to print.
pub fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            redact_text(u.as_str())
        }
        Ok(u) => redact_text(u.as_str()),
        // Not a URL a parser accepts (a bad port, `--index-url=…`): the
        // credentials still never show.
        Err(_) => redact_text(url),
    }
}

/// Any text with the secrets of every URL in it removed, whether or not
/// the URL is valid: the user-info of `scheme://user:pass@host`, and the
/// values of query parameters that carry a token or a signature
/// (`?token=…`, `X-Amz-Signature=…`, `sig=…`), which become `***`. What
/// every message passes through before it is printed.
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The authority ends at the first `/`, `?`, `#`, quote or space.
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '`') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo) => out.push_str(&authority[userinfo + 1..]),
            None => out.push_str(authority),
        }
        // The rest of the URL: its path, query and fragment.
        let after = &after[end..];
        let url_end = after
            .find(|c: char| ends_url(c) || c.is_whitespace())
            .unwrap_or(after.len());
        redact_query(&after[..url_end], &mut out);
        rest = &after[url_end..];
    }
    out.push_str(rest);
    out
}

/// Whether `text` holds a secret [`redact_text`] would remove.
pub fn holds_secret(text: &str) -> bool {
    text.contains("://") && redact_text(text) != text
}

fn ends_url(c: char) -> bool {
    matches!(c, '"' | '\'' | '`' | '<' | '>')
}

/// `tail` (a URL's path, query and fragment) onto `out`, the values of
/// its secret query parameters as `***`.
fn redact_query(tail: &str, out: &mut String) {
    let Some(q) = tail.find('?') else {
        out.push_str(tail);
        return;
    };
    out.push_str(&tail[..=q]);
    let query = &tail[q + 1..];
    let (query, fragment) = match query.find('#') {
        Some(h) => query.split_at(h),
        None => (query, ""),
    };
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((key, value)) if secret_key(key) && !value.is_empty() => {
                out.push_str(key);
                out.push_str("=***");
            }
            _ => out.push_str(pair),
        }
    }
    out.push_str(fragment);
}

/// A query parameter whose value is a credential: a token, a key, a
/// password, a signature (S3's and GCS's presigned URLs, Azure's SAS,
/// CloudFront's signed URLs).
fn secret_key(key: &str) -> bool {
    const WORDS: [&str; 10] = [
        "token",
        "sig",
        "secret",
        "password",
        "passwd",
        "auth",
        "key",
        "credential",
        "session",
        "policy",
    ];
    let key = key.to_ascii_lowercase();
    WORDS.iter().any(|word| key.contains(word))
}

impl Keyring {
    /// Take the user-info out of `url` (keeping it for its host) and return
    /// the bare URL.
    pub fn take_from_url(&mut self, url: &mut Url) {
        if url.username().is_empty() {
            return;
        }
        let decode = |s: &str| percent_decode(s);
        let creds = Credentials {
            username: decode(url.username()),
            password: url.password().map(decode),
        };
        if let Some(key) = host_key(url) {
            self.by_host.insert(key, creds);
        }
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }

    /// Read a netrc file (`machine`, `login`, `password`, `default`).
    pub fn read_netrc(&mut self, path: &Path) {
        let Ok(text) = fs_err::read_to_string(path) else {
            return;
        };
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let mut i = 0;
        let mut current: Option<Option<String>> = None;
        let mut login = None;
        let mut password = None;
        let flush = |current: &mut Option<Option<String>>,
                     login: &mut Option<String>,
                     password: &mut Option<String>,
                     ring: &mut Self| {
            if let (Some(machine), Some(user)) = (current.take(), login.take()) {
                let creds = Credentials {
                    username: user,
                    password: password.take(),
                };
                match machine {
                    Some(host) => {
                        ring.by_host.entry(host).or_insert(creds);
                    }
                    None => ring.default = ring.default.take().or(Some(creds)),
                }
            }
            *password = None;
        };
        while i < tokens.len() {
            match tokens[i] {
                "machine" => {
                    flush(&mut current, &mut login, &mut password, self);
                    current = Some(tokens.get(i + 1).map(|s| (*s).to_string()));
                    i += 2;
                }
                "default" => {
                    flush(&mut current, &mut login, &mut password, self);
                    current = Some(None);
                    i += 1;
                }
                "login" => {
                    login = tokens.get(i + 1).map(|s| (*s).to_string());
                    i += 2;
                }
                "password" => {
                    password = tokens.get(i + 1).map(|s| (*s).to_string());
                    i += 2;
                }
                _ => i += 1,
            }
        }
        flush(&mut current, &mut login, &mut password, self);
    }

    pub fn for_url(&self, url: &Url) -> Option<&Credentials> {
        let key = host_key(url)?;
        self.by_host
            .get(&key)
            .or_else(|| url.host_str().and_then(|h| self.by_host.get(h)))
            .or(self.default.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_credentials_are_taken_and_redacted() {
        let mut ring = Keyring::default();
        let mut url = Url::parse("https://user:p%40ss@idx.example:8443/simple/").unwrap();
        ring.take_from_url(&mut url);
        assert_eq!(url.as_str(), "https://idx.example:8443/simple/");
        let creds = ring.for_url(&url).unwrap();
        assert_eq!(creds.password.as_deref(), Some("p@ss"));
        assert_eq!(redact("https://a:b@h/x"), "https://h/x");
        let secret = SecretUrl::new("https://u:s3cret@h:99999/x");
        assert_eq!(secret.to_string(), "https://h:99999/x");
        assert!(!format!("{secret:?}").contains("s3cret"));
        assert_eq!(secret.expose(), "https://u:s3cret@h:99999/x");
        assert_eq!(
            redact("--index-url=https://u:s3cret@h:99999/simple"),
            "--index-url=https://h:99999/simple"
        );
        assert_eq!(
            redact_text("error: `https://u:p@@h:x/` and http://t@h2 ok"),
            "error: `https://h:x/` and http://h2 ok"
        );
    }

    #[test]
    fn a_signed_urls_query_token_never_shows() {
        assert_eq!(
            redact_text("https://h/a-1.whl?token=S3cret answered HTTP 404"),
            "https://h/a-1.whl?token=*** answered HTTP 404"
        );
        assert_eq!(
            redact_text(
                "`https://b.s3.amazonaws.com/x.whl?X-Amz-Credential=AK&X-Amz-Date=1&X-Amz-Signature=ab#sha256=00`"
            ),
            "`https://b.s3.amazonaws.com/x.whl?X-Amz-Credential=***&X-Amz-Date=1&X-Amz-Signature=***#sha256=00`"
        );
        assert_eq!(
            redact("https://u:p@h/x.whl?sv=1&sig=abc"),
            "https://h/x.whl?sv=1&sig=***"
        );
        // What carries no secret is left as it is.
        let plain = "https://h/simple/a/?page=2#sha256=00 and text?token=not-a-url";
        assert_eq!(redact_text(plain), plain);
        assert!(!holds_secret(plain));
        assert!(holds_secret("x https://h/a.whl?access_token=t y"));
        assert!(holds_secret("x https://u:p@h/a.whl y"));
    }
}
