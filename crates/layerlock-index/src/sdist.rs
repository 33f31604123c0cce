//! The files at the top of a source distribution that say what it needs
//! (`PKG-INFO`, `pyproject.toml`, `setup.cfg`, `setup.py`), read from the
//! archive in memory: a `.tar.gz` streamed through gzip and a minimal tar
//! reader, a `.zip` through its central directory. Nothing is unpacked to
//! disk and nothing in it runs.
//!
//! A tar is read only as far as the answer needs: once the files seen
//! settle what [`layerlock_dist::sdist_metadata`] says
//! ([`layerlock_dist::sdist_settled`]), the rest is neither read nor
//! downloaded. What lies after is then not checked either (a second top
//! folder, a metadata file twice, the end blocks): the price of not
//! reading hundreds of megabytes, and no more than a build's extraction
//! trusts, since the metadata the reader takes is the metadata the build
//! must produce (PEP 643) or the files it builds from.

use std::io::Read;

use layerlock_dist::SourceFiles;

/// The most one wanted member may hold: real ones are kilobytes.
pub const MAX_MEMBER_BYTES: u64 = 4 << 20;
/// The most an archive may inflate to before the reader gives up.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

const BLOCK: usize = 512;

/// The most members a zip sdist may list.
const MAX_ZIP_MEMBERS: usize = 200_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdistError {
    #[error("not a gzip-compressed tar archive: {0}")]
    Gzip(String),
    #[error("the tar archive is cut short or malformed: {0}")]
    Tar(&'static str),
    #[error("the zip archive cannot be read: {0}")]
    Zip(String),
    #[error("{0} is larger than {max} MiB", max = MAX_MEMBER_BYTES >> 20)]
    TooLarge(String),
    #[error("it inflates past {max} MiB", max = MAX_UNPACKED_BYTES >> 20)]
    Bomb,
    #[error("a source distribution as {0}, which layerlock does not read (.tar.gz and .zip only)")]
    Format(String),
    /// The download stopped at its cap before the answer was settled.
    #[error(
        "its {missing}, if any, lies past the first {mib} MiB of {size}; layerlock does not download more of {which} to read it",
        mib = cap >> 20,
        size = total.map_or_else(|| "the archive".to_string(), |t| format!("a {} MiB archive", t.div_ceil(1 << 20))),
        which = if total.is_some_and(|t| t > *cap) { "an archive that large" } else { "an sdist" }
    )]
    PastCap {
        /// The wanted files not seen before the cap, as words.
        missing: String,
        cap: u64,
        /// The archive's size, when the server or the index says it.
        total: Option<u64>,
    },
}

/// Why a byte source stopped: the cap on what is downloaded was reached
/// (`cap` bytes of an archive of `total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the download stopped at its cap of {cap} bytes")]
pub struct CapReached {
    pub cap: u64,
    pub total: Option<u64>,
}

/// What the network side hands the archive reader.
pub(crate) enum Piece {
    Bytes(Vec<u8>),
    /// No more comes: the cap was reached.
    Cap(CapReached),
    /// No more comes: the connection failed (why).
    Failed(String),
}

/// A body arriving in pieces, as a blocking `Read` for the archive reader
/// (on a blocking thread). When the reader stops, dropping this tells the
/// network side to stop downloading.
pub(crate) struct Pieces {
    rx: tokio::sync::mpsc::Receiver<Piece>,
    held: Vec<u8>,
    at: usize,
    ended: Option<Piece>,
}

impl Pieces {
    pub(crate) fn new(rx: tokio::sync::mpsc::Receiver<Piece>) -> Self {
        Self {
            rx,
            held: Vec::new(),
            at: 0,
            ended: None,
        }
    }
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.held.len() {
            // The sender lives only while its response does (bounded by the
            // client's timeouts); when it is gone, the body has ended.
            let piece = match self.ended.take() {
                Some(ended) => ended,
                None => match self.rx.blocking_recv() {
                    Some(piece) => piece,
                    None => return Ok(0),
                },
            };
            match piece {
                Piece::Bytes(bytes) => {
                    self.held = bytes;
                    self.at = 0;
                }
                Piece::Cap(cap) => {
                    self.ended = Some(Piece::Cap(cap));
                    return Err(std::io::Error::other(cap));
                }
                Piece::Failed(why) => {
                    self.ended = Some(Piece::Failed(why.clone()));
                    return Err(std::io::Error::other(why));
                }
            }
        }
        let n = buf.len().min(self.held.len() - self.at);
        buf[..n].copy_from_slice(&self.held[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The wanted files of a `.tar.gz` read from `r` as it arrives, read no
/// further than the answer needs.
pub(crate) fn tar_gz_files(r: impl Read) -> Result<SourceFiles, SdistError> {
    let gz = flate2::read::MultiGzDecoder::new(r);
    tar_files(gz.take(MAX_UNPACKED_BYTES + 1))
}

/// An I/O error of the byte source or gzip, as the reader's error.
fn io_error(e: &std::io::Error, read: u64) -> SdistError {
    if let Some(cap) = e.get_ref().and_then(|i| i.downcast_ref::<CapReached>()) {
        return SdistError::PastCap {
            missing: String::new(),
            cap: cap.cap,
            total: cap.total,
        };
    }
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof if read >= MAX_UNPACKED_BYTES => SdistError::Bomb,
        std::io::ErrorKind::UnexpectedEof => SdistError::Tar("it ends inside an entry"),
        _ => SdistError::Gzip(e.to_string()),
    }
}

/// The wanted files not among `files`, as words (`setup.cfg or setup.py`).
fn unseen(files: &SourceFiles) -> String {
    let names = ["PKG-INFO", "pyproject.toml", "setup.cfg", "setup.py"];
    let seen = [
        files.pkg_info.is_some(),
        files.pyproject.is_some(),
        files.setup_cfg.is_some(),
        files.setup_py.is_some(),
    ];
    let missing: Vec<&str> = names
        .iter()
        .zip(seen)
        .filter(|(_, seen)| !seen)
        .map(|(name, _)| *name)
        .collect();
    match missing.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "metadata files".to_string(),
    }
}

/// A member's path as an extractor would place it: `.` and empty parts
/// dropped. `None` for one that climbs out (`..`) or is absolute.
fn placed(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    (!parts.contains(&"..")).then_some(parts)
}

/// Which wanted file the placed path `parts` is: `TOP/NAME` one folder
/// deep.
fn wanted(parts: &[&str]) -> Option<usize> {
    let [_, name] = parts else {
        return None;
    };
    ["PKG-INFO", "pyproject.toml", "setup.cfg", "setup.py"]
        .iter()
        .position(|w| w == name)
}

/// The one top folder every member of the archive must be in.
#[derive(Default)]
struct Seen {
    top: Option<String>,
}

impl Seen {
    /// Check `path` against the archive's shape; its placed parts.
    fn member<'p>(&mut self, path: &'p str) -> Result<Vec<&'p str>, SdistError> {
        let parts = placed(path).ok_or(SdistError::Tar(
            "a member lies outside the archive's folder",
        ))?;
        let Some(top) = parts.first() else {
            return Ok(parts);
        };
        match &self.top {
            None => self.top = Some((*top).to_string()),
            Some(first) if first != top => {
                return Err(SdistError::Tar("members lie in more than one top folder"));
            }
            Some(_) => {}
        }
        Ok(parts)
    }
}

/// Put `data` in its slot; a second file of one name is an error (an
/// extractor would keep the last, a reader the first).
fn fill(files: &mut SourceFiles, which: usize, data: Vec<u8>) -> Result<(), SdistError> {
    let place = slot(files, which);
    if place.is_some() {
        return Err(SdistError::Tar("a metadata file is in the archive twice"));
    }
    *place = Some(data);
    Ok(())
}

fn slot(files: &mut SourceFiles, which: usize) -> &mut Option<Vec<u8>> {
    match which {
        0 => &mut files.pkg_info,
        1 => &mut files.pyproject,
        2 => &mut files.setup_cfg,
        _ => &mut files.setup_py,
    }
}

/// The wanted files of the sdist `filename` held in `bytes`.
pub fn source_files(filename: &str, bytes: &[u8]) -> Result<SourceFiles, SdistError> {
    let lower = filename.to_ascii_lowercase();
    if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        // Every gzip member, as `tarfile` reads them.
        let gz = flate2::read::MultiGzDecoder::new(bytes);
        tar_files(gz.take(MAX_UNPACKED_BYTES + 1))
    } else if lower.ends_with(".zip") {
        zip_files(bytes)
    } else {
        let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
        Err(SdistError::Format(format!(".{ext}")))
    }
}

/// Read `n` bytes, or say the archive ends too soon.
fn read_exact(r: &mut impl Read, buf: &mut [u8], read: &mut u64) -> Result<(), SdistError> {
    r.read_exact(buf).map_err(|e| io_error(&e, *read))?;
    *read += buf.len() as u64;
    Ok(())
}

/// Skip `n` bytes.
fn skip(r: &mut impl Read, n: u64, read: &mut u64) -> Result<(), SdistError> {
    let copied =
        std::io::copy(&mut r.take(n), &mut std::io::sink()).map_err(|e| io_error(&e, *read))?;
    *read += copied;
    if copied < n {
        return Err(if *read >= MAX_UNPACKED_BYTES {
            SdistError::Bomb
        } else {
            SdistError::Tar("it ends inside an entry")
        });
    }
    Ok(())
}

/// An octal field (NUL- or space-terminated).
fn octal(field: &[u8]) -> Result<u64, SdistError> {
    if field.first().is_some_and(|b| b & 0x80 != 0) {
        return Err(SdistError::Tar(
            "a size in base-256 (an entry of 8 GiB or more)",
        ));
    }
    let text: String = field
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| *b as char)
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(text, 8).map_err(|_| SdistError::Tar("a size that is not octal"))
}

fn c_string(field: &[u8]) -> String {
    let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// The `path` record of a PAX extended header (`LEN key=VALUE\n`
/// records). One that sets the next member's `size` is refused: honouring
/// it or not, a reader and an extractor could see different members.
fn pax_path(data: &[u8]) -> Result<Option<String>, SdistError> {
    let malformed = || SdistError::Tar("a PAX header is malformed");
    let mut rest = data;
    let mut path = None;
    while !rest.is_empty() {
        let space = rest.iter().position(|b| *b == b' ').ok_or_else(malformed)?;
        let len: usize = std::str::from_utf8(&rest[..space])
            .ok()
            .and_then(|l| l.parse().ok())
            .ok_or_else(malformed)?;
        if len <= space || len > rest.len() {
            return Err(malformed());
        }
        let record = &rest[space + 1..len];
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(value) = record.strip_prefix(b"path=") {
            path = Some(String::from_utf8_lossy(value).into_owned());
        } else if record.starts_with(b"size=") {
            return Err(SdistError::Tar("a PAX header sets a member's size"));
        }
        rest = &rest[len..];
    }
    Ok(path)
}

/// Whether a header block's checksum is right (the sum of its bytes with
/// the checksum field read as spaces).
fn checksum_ok(header: &[u8; BLOCK]) -> bool {
    let Ok(stored) = octal(&header[148..156]) else {
        return false;
    };
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    sum == stored
}

/// The wanted files of a tar stream (ustar, PAX and GNU long names), read
/// until they settle the answer or the archive ends. What is read must
/// keep every member in one top folder and hold each wanted file once, as
/// a plain file; an archive read to its end must end with its end block.
/// Stopped by the byte source's cap, the error names the files not seen.
fn tar_files(r: impl Read) -> Result<SourceFiles, SdistError> {
    let mut files = SourceFiles::default();
    match tar_walk(r, &mut files) {
        Err(SdistError::PastCap { cap, total, .. }) => Err(SdistError::PastCap {
            missing: unseen(&files),
            cap,
            total,
        }),
        Err(e) => Err(e),
        Ok(()) => Ok(files),
    }
}

/// [`tar_files`]' walk, filling `files`.
fn tar_walk(mut r: impl Read, files: &mut SourceFiles) -> Result<(), SdistError> {
    let mut seen = Seen::default();
    let mut read = 0u64;
    let mut long_name: Option<String> = None;
    let mut header = [0u8; BLOCK];
    loop {
        read_exact(&mut r, &mut header, &mut read)?;
        if header.iter().all(|b| *b == 0) {
            return Ok(());
        }
        if !checksum_ok(&header) {
            return Err(SdistError::Tar("a header's checksum is wrong"));
        }
        let size = octal(&header[124..136])?;
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        let kind = header[156];
        let ustar = &header[257..262] == b"ustar";
        let mut name = c_string(&header[..100]);
        if ustar {
            let prefix = c_string(&header[345..500]);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
        }
        if let Some(long) = long_name.take() {
            name = long;
        }
        if matches!(kind, b'x' | b'L') {
            if size > MAX_MEMBER_BYTES {
                return Err(SdistError::TooLarge("an extended header".to_string()));
            }
            let mut data = vec![0u8; size as usize];
            read_exact(&mut r, &mut data, &mut read)?;
            skip(&mut r, padded - size, &mut read)?;
            long_name = if kind == b'x' {
                pax_path(&data)?
            } else {
                Some(c_string(&data))
            };
            continue;
        }
        if kind == b'g' {
            // A global header (git archive writes one) names no member.
            skip(&mut r, padded, &mut read)?;
            continue;
        }
        let parts = seen.member(&name)?;
        match (wanted(&parts), kind) {
            (Some(which), b'0' | 0 | b'7') => {
                if size > MAX_MEMBER_BYTES {
                    return Err(SdistError::TooLarge(name));
                }
                let mut data = vec![0u8; size as usize];
                read_exact(&mut r, &mut data, &mut read)?;
                skip(&mut r, padded - size, &mut read)?;
                fill(files, which, data)?;
                if layerlock_dist::sdist_settled(files) {
                    return Ok(());
                }
            }
            (Some(_), _) => {
                return Err(SdistError::Tar(
                    "a metadata file is a link or not a plain file",
                ));
            }
            // Directories and links carry no data.
            (None, _) => skip(&mut r, padded, &mut read)?,
        }
        if read > MAX_UNPACKED_BYTES {
            return Err(SdistError::Bomb);
        }
    }
}

impl From<crate::zip::ZipError> for SdistError {
    fn from(e: crate::zip::ZipError) -> Self {
        Self::Zip(e.to_string())
    }
}

/// The wanted members a zip sdist's central `directory` lists (which
/// file each is, its name, where its data lies), once every member passed
/// the archive's checks: not too many, one top folder, none outside it.
pub(crate) fn zip_wanted(
    directory: &[u8],
) -> Result<Vec<(usize, String, crate::zip::Member)>, SdistError> {
    let members = crate::zip::members(directory)?;
    if members.len() > MAX_ZIP_MEMBERS {
        return Err(SdistError::Zip(format!(
            "it lists more than {MAX_ZIP_MEMBERS} members"
        )));
    }
    let mut seen = Seen::default();
    let mut out = Vec::new();
    for (name, member) in members {
        let parts = seen.member(&name)?;
        if let Some(which) = wanted(&parts) {
            out.push((which, name, member));
        }
    }
    Ok(out)
}

/// Keep one wanted member's inflated `data` as file `which`, counting it
/// towards what the archive has `inflated` so far.
pub(crate) fn keep_member(
    files: &mut SourceFiles,
    which: usize,
    name: &str,
    data: Vec<u8>,
    inflated: &mut u64,
) -> Result<(), SdistError> {
    if data.len() as u64 > MAX_MEMBER_BYTES {
        return Err(SdistError::TooLarge(name.to_string()));
    }
    *inflated += data.len() as u64;
    if *inflated > MAX_UNPACKED_BYTES {
        return Err(SdistError::Bomb);
    }
    fill(files, which, data)
}

/// The wanted files of a zip sdist held whole in `bytes`.
fn zip_files(bytes: &[u8]) -> Result<SourceFiles, SdistError> {
    let truncated = || SdistError::from(crate::zip::ZipError::Truncated);
    let dir = crate::zip::find_directory(bytes, 0)?;
    let start = usize::try_from(dir.offset).map_err(|_| truncated())?;
    let end = start
        .checked_add(usize::try_from(dir.size).map_err(|_| truncated())?)
        .ok_or_else(truncated)?;
    let directory = bytes.get(start..end).ok_or_else(truncated)?;
    let mut files = SourceFiles::default();
    let mut inflated = 0u64;
    for (which, name, member) in zip_wanted(directory)? {
        let at = usize::try_from(member.local_header_offset).map_err(|_| truncated())?;
        let data = crate::zip::read_member(bytes.get(at..).ok_or_else(truncated)?, &member)?;
        keep_member(&mut files, which, &name, data, &mut inflated)?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_entry(out: &mut Vec<u8>, name: &str, data: &[u8], kind: u8) {
        let mut header = [0u8; BLOCK];
        header[..name.len()].copy_from_slice(name.as_bytes());
        let size = format!("{:011o}\0", data.len());
        header[124..136].copy_from_slice(size.as_bytes());
        header[156] = kind;
        header[257..262].copy_from_slice(b"ustar");
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }

    fn targz(entries: &[(&str, &[u8], u8)]) -> Vec<u8> {
        use std::io::Write;
        let mut tar = Vec::new();
        for (name, data, kind) in entries {
            tar_entry(&mut tar, name, data, *kind);
        }
        tar.extend_from_slice(&[0u8; 2 * BLOCK]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap_or_default();
        gz.finish().unwrap_or_default()
    }

    #[test]
    fn the_top_level_files_are_found_and_nothing_deeper() {
        let bytes = targz(&[
            ("a-1/", b"", b'5'),
            ("a-1/PKG-INFO", b"Metadata-Version: 2.1\n", b'0'),
            ("a-1/sub/setup.py", b"deeper", b'0'),
            ("a-1/setup.cfg", b"[options]\n", b'0'),
        ]);
        let files = source_files("a-1.tar.gz", &bytes).expect("reads");
        assert_eq!(
            files.pkg_info.as_deref(),
            Some(&b"Metadata-Version: 2.1\n"[..])
        );
        assert_eq!(files.setup_cfg.as_deref(), Some(&b"[options]\n"[..]));
        assert_eq!(files.setup_py, None);
    }

    #[test]
    fn an_archive_whose_reading_an_extractor_would_not_share_is_refused() {
        let cases: [&[(&str, &[u8], u8)]; 5] = [
            // A decoy folder ahead of the real one.
            &[
                ("aaa/PKG-INFO", b"decoy", b'0'),
                ("a-1/PKG-INFO", b"real", b'0'),
            ],
            // One name twice: an extractor keeps the last.
            &[
                ("a-1/setup.py", b"first", b'0'),
                ("a-1/setup.py", b"second", b'0'),
            ],
            // A link where a metadata file should be.
            &[("a-1/setup.py", b"", b'2')],
            // A name that places the file where another name would.
            &[
                ("a-1/setup.cfg", b"x", b'0'),
                ("a-1//./setup.cfg", b"y", b'0'),
            ],
            // A PAX header that sets a member's size.
            &[
                ("PaxHeader/x", b"12 size=999\n", b'x'),
                ("a-1/PKG-INFO", b"x", b'0'),
            ],
        ];
        for entries in cases {
            let bytes = targz(entries);
            assert!(source_files("a-1.tar.gz", &bytes).is_err(), "{entries:?}");
        }
        // Without its end blocks, an archive is cut short.
        let mut tar = Vec::new();
        tar_entry(&mut tar, "a-1/PKG-INFO", b"x", b'0');
        assert!(tar_files(&tar[..]).is_err());
    }

    #[test]
    fn a_pax_path_names_the_next_entry() {
        let record = b"27 path=a-1/pyproject.toml\n";
        let bytes = targz(&[
            ("PaxHeader/x", record, b'x'),
            ("a-1/truncated-name", b"[project]\n", b'0'),
        ]);
        let files = source_files("a-1.tar.gz", &bytes).expect("reads");
        assert_eq!(files.pyproject.as_deref(), Some(&b"[project]\n"[..]));
    }

    #[test]
    fn bad_archives_are_errors_not_panics() {
        assert!(source_files("a-1.tar.gz", b"not gzip").is_err());
        assert!(matches!(
            source_files("a-1.tar.bz2", b""),
            Err(SdistError::Format(_))
        ));
        let mut bytes = targz(&[("a-1/PKG-INFO", &[b'x'; 2000], b'0')]);
        bytes.truncate(bytes.len() / 2);
        assert!(source_files("a-1.tar.gz", &bytes).is_err());
    }

    #[test]
    fn reading_stops_once_the_files_settle_the_answer() {
        let fixed = b"Metadata-Version: 2.2\nName: a\nVersion: 1\nRequires-Dist: b\n";
        let noise: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let mut bytes = targz(&[
            ("a-1/PKG-INFO", fixed, b'0'),
            ("a-1/big.bin", &noise, b'0'),
            ("a-1/setup.py", b"setup()", b'0'),
        ]);
        // Cut in half, the archive still answers: what follows was not read.
        bytes.truncate(bytes.len() / 2);
        let files = source_files("a-1.tar.gz", &bytes).expect("reads");
        assert_eq!(files.pkg_info.as_deref(), Some(&fixed[..]));
        assert_eq!(files.setup_py, None);
    }

    /// `bytes`, then the cap.
    struct Capped<'a>(&'a [u8]);

    impl Read for Capped<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other(CapReached {
                    cap: 64 << 20,
                    total: Some(200 << 20),
                }));
            }
            self.0.read(buf)
        }
    }

    #[test]
    fn a_cap_before_the_answer_names_what_was_not_seen() {
        let noise: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let bytes = targz(&[
            ("a-1/PKG-INFO", b"Metadata-Version: 2.1\n", b'0'),
            ("a-1/pyproject.toml", b"[build-system]\n", b'0'),
            ("a-1/big.bin", &noise, b'0'),
            ("a-1/setup.py", b"setup()", b'0'),
        ]);
        let err = tar_gz_files(Capped(&bytes[..bytes.len() / 2])).expect_err("capped");
        assert_eq!(
            err.to_string(),
            "its setup.cfg or setup.py, if any, lies past the first 64 MiB of a 200 MiB \
             archive; layerlock does not download more of an archive that large to read it"
        );
    }

    #[test]
    fn pieces_read_as_the_body_they_carry() {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tx.try_send(Piece::Bytes(b"ab".to_vec())).expect("room");
        tx.try_send(Piece::Bytes(Vec::new())).expect("room");
        tx.try_send(Piece::Bytes(b"cde".to_vec())).expect("room");
        tx.try_send(Piece::Failed("reset".to_string()))
            .expect("room");
        drop(tx);
        let mut pieces = Pieces::new(rx);
        let mut out = [0u8; 5];
        pieces.read_exact(&mut out).expect("five bytes");
        assert_eq!(&out, b"abcde");
        // A failure stays one, read after read.
        assert!(pieces.read(&mut out).is_err());
        assert!(pieces.read(&mut out).is_err());
    }
}
