//! Test helpers: site directories written as an installer leaves them.

use std::path::Path;

use base64::Engine;
use sha2::{Digest, Sha256};

/// A RECORD digest, `sha256=` and urlsafe base64 without padding.
pub(crate) fn record_hash(body: &[u8]) -> String {
    format!(
        "sha256={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(body))
    )
}

/// Install `name` 1.0 into `site`: METADATA, INSTALLER and a RECORD that
/// lists every one of `files` (path under the site, content) with its hash.
pub(crate) fn install(site: &Path, name: &str, files: &[(&str, &str)]) {
    let info = format!("{name}-1.0.dist-info");
    std::fs::create_dir_all(site.join(&info)).unwrap();
    let mut record = String::new();
    for (path, body) in files {
        let file = site.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, body).unwrap();
        record.push_str(&format!(
            "{path},{},{}\n",
            record_hash(body.as_bytes()),
            body.len()
        ));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    std::fs::write(
        site.join(&info).join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
    )
    .unwrap();
    std::fs::write(site.join(&info).join("INSTALLER"), "uv\n").unwrap();
    std::fs::write(site.join(&info).join("RECORD"), record).unwrap();
}

/// A lock entry as the plan sees it, from `lock.txt:1`.
pub(crate) fn wanted(name: &str, version: &str) -> crate::Wanted {
    crate::Wanted {
        name: name.to_string(),
        version: version.parse().unwrap(),
        origin: "lock.txt:1".to_string(),
    }
}

/// A snapshot of `(name, version, RECORD digest)` distributions installed
/// by uv in `site`.
pub(crate) fn snapshot(dists: &[(&str, &str, &str)]) -> crate::Snapshot {
    let mut snapshot = crate::Snapshot::default();
    for (name, version, record) in dists {
        snapshot.dists.insert(
            name.to_string(),
            crate::Installed {
                name: name.to_string(),
                version: version.to_string(),
                installer: "uv".to_string(),
                record_digest: Some(record.to_string()),
                direct_url: false,
                path: std::path::PathBuf::from(format!("{name}-{version}.dist-info")),
                site: std::path::PathBuf::from("site"),
                egg_info: false,
            },
        );
    }
    snapshot
}
