//! Just enough of the ZIP format to pull `*.dist-info/METADATA` out of a
//! wheel, from the whole file or from ranges of it (the tail holding the
//! central directory, then one member). Zip64 is handled: CUDA wheels pass
//! 4 GiB.

use std::io::Read;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipError {
    #[error("no end-of-central-directory record; not a zip file")]
    NoEnd,
    #[error("the zip structure is cut short or inconsistent")]
    Truncated,
    #[error("no top-level *.dist-info/METADATA member")]
    NoMetadata,
    #[error("METADATA uses compression method {0}, which layerlock does not read")]
    Method(u16),
    #[error("METADATA does not inflate: {0}")]
    Inflate(String),
    #[error("METADATA inflates past {} MiB; a zip bomb, or not a real wheel", MAX_METADATA_BYTES / (1024 * 1024))]
    TooLarge,
}

/// Largest METADATA inflated or stored: real ones are kilobytes.
pub const MAX_METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// Where the central directory lies in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directory {
    pub offset: u64,
    pub size: u64,
}

/// The METADATA member as the central directory describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub local_header_offset: u64,
    pub compressed_size: u64,
    pub method: u16,
    pub crc32: u32,
    /// Uncompressed.
    pub size: u64,
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, ZipError> {
    let s = b
        .get(at..at.checked_add(2).ok_or(ZipError::Truncated)?)
        .ok_or(ZipError::Truncated)?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, ZipError> {
    let s = b
        .get(at..at.checked_add(4).ok_or(ZipError::Truncated)?)
        .ok_or(ZipError::Truncated)?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, ZipError> {
    let s = b
        .get(at..at.checked_add(8).ok_or(ZipError::Truncated)?)
        .ok_or(ZipError::Truncated)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

/// Find the central directory from the last bytes of a file. `tail` holds
/// the file's bytes from `tail_start` to its end.
pub fn find_directory(tail: &[u8], tail_start: u64) -> Result<Directory, ZipError> {
    const EOCD: u32 = 0x0605_4b50;
    const LOCATOR: u32 = 0x0706_4b50;
    const EOCD64: u32 = 0x0606_4b50;
    if tail.len() < 22 {
        return Err(ZipError::NoEnd);
    }
    let mut at = tail.len() - 22;
    loop {
        if u32_at(tail, at)? == EOCD {
            break;
        }
        if at == 0 {
            return Err(ZipError::NoEnd);
        }
        at -= 1;
    }
    let size = u64::from(u32_at(tail, at + 12)?);
    let offset = u64::from(u32_at(tail, at + 16)?);
    if (size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF)
        && at >= 20
        && u32_at(tail, at - 20)? == LOCATOR
    {
        let eocd64 = u64_at(tail, at - 20 + 8)?;
        let rel = usize::try_from(eocd64.checked_sub(tail_start).ok_or(ZipError::Truncated)?)
            .map_err(|_| ZipError::Truncated)?;
        if u32_at(tail, rel)? != EOCD64 {
            return Err(ZipError::Truncated);
        }
        // `rel` comes from the file: add to it without overflowing.
        let at = |delta: usize| rel.checked_add(delta).ok_or(ZipError::Truncated);
        return Ok(Directory {
            size: u64_at(tail, at(40)?)?,
            offset: u64_at(tail, at(48)?)?,
        });
    }
    Ok(Directory { offset, size })
}

/// Find the top-level `NAME.dist-info/METADATA` entry in a central directory.
pub fn find_metadata(directory: &[u8]) -> Result<Member, ZipError> {
    members(directory)?
        .into_iter()
        .find(|(name, _)| {
            let mut parts = name.split('/');
            matches!(
                (parts.next(), parts.next(), parts.next()),
                (Some(dir), Some("METADATA"), None) if dir.ends_with(".dist-info")
            )
        })
        .map(|(_, member)| member)
        .ok_or(ZipError::NoMetadata)
}

/// Every entry a central directory lists whose name is UTF-8, with where
/// its data lies (Zip64 sizes and offsets read from the extra field).
pub fn members(directory: &[u8]) -> Result<Vec<(String, Member)>, ZipError> {
    const CENTRAL: u32 = 0x0201_4b50;
    let mut at = 0;
    let mut out = Vec::new();
    while at + 46 <= directory.len() && u32_at(directory, at)? == CENTRAL {
        let method = u16_at(directory, at + 10)?;
        let crc32 = u32_at(directory, at + 16)?;
        let mut compressed = u64::from(u32_at(directory, at + 20)?);
        let mut uncompressed = u64::from(u32_at(directory, at + 24)?);
        let name_len = usize::from(u16_at(directory, at + 28)?);
        let extra_len = usize::from(u16_at(directory, at + 30)?);
        let comment_len = usize::from(u16_at(directory, at + 32)?);
        let mut offset = u64::from(u32_at(directory, at + 42)?);
        let name = directory
            .get(at + 46..at + 46 + name_len)
            .ok_or(ZipError::Truncated)?;
        let extra = directory
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or(ZipError::Truncated)?;
        // Zip64 extended information: the fields set to 0xFFFFFFFF, in order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e)?;
            let len = usize::from(u16_at(extra, e + 2)?);
            if id == 1 {
                let mut field = e + 4;
                if uncompressed == 0xFFFF_FFFF {
                    uncompressed = u64_at(extra, field)?;
                    field += 8;
                }
                if compressed == 0xFFFF_FFFF {
                    compressed = u64_at(extra, field)?;
                    field += 8;
                }
                if offset == 0xFFFF_FFFF {
                    offset = u64_at(extra, field)?;
                }
            }
            e += 4 + len;
        }
        // A name that is not UTF-8 keeps its bad bytes replaced: it is
        // still a file the wheel writes.
        out.push((
            String::from_utf8_lossy(name).into_owned(),
            Member {
                local_header_offset: offset,
                compressed_size: compressed,
                method,
                crc32,
                size: uncompressed,
            },
        ));
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// The names of the members a central directory lists, in its order
/// (names that are not UTF-8 are kept with their bad bytes replaced: they
/// are still files the wheel writes).
pub fn member_names(directory: &[u8]) -> Result<Vec<String>, ZipError> {
    const CENTRAL: u32 = 0x0201_4b50;
    let mut at = 0;
    let mut out = Vec::new();
    while at + 46 <= directory.len() && u32_at(directory, at)? == CENTRAL {
        let name_len = usize::from(u16_at(directory, at + 28)?);
        let extra_len = usize::from(u16_at(directory, at + 30)?);
        let comment_len = usize::from(u16_at(directory, at + 32)?);
        let name = directory
            .get(at + 46..at + 46 + name_len)
            .ok_or(ZipError::Truncated)?;
        out.push(String::from_utf8_lossy(name).into_owned());
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// Read the member's bytes from a buffer that starts at its local header.
pub fn read_member(local: &[u8], member: &Member) -> Result<Vec<u8>, ZipError> {
    if u32_at(local, 0)? != 0x0403_4b50 {
        return Err(ZipError::Truncated);
    }
    let name_len = usize::from(u16_at(local, 26)?);
    let extra_len = usize::from(u16_at(local, 28)?);
    let start = 30 + name_len + extra_len;
    let size = usize::try_from(member.compressed_size).map_err(|_| ZipError::Truncated)?;
    let end = start.checked_add(size).ok_or(ZipError::Truncated)?;
    let data = local.get(start..end).ok_or(ZipError::Truncated)?;
    match member.method {
        0 if data.len() as u64 > MAX_METADATA_BYTES => Err(ZipError::TooLarge),
        0 => Ok(data.to_vec()),
        8 => {
            // Inflate at most one byte past the cap: a bomb stops there.
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(data)
                .take(MAX_METADATA_BYTES + 1)
                .read_to_end(&mut out)
                .map_err(|e| ZipError::Inflate(e.to_string()))?;
            if out.len() as u64 > MAX_METADATA_BYTES {
                return Err(ZipError::TooLarge);
            }
            Ok(out)
        }
        other => Err(ZipError::Method(other)),
    }
}

/// Bytes past the local header's fixed part to fetch in one go: the name and
/// extra field are rarely longer than this.
pub const LOCAL_SLACK: u64 = 30 + 1024;

/// METADATA from a whole wheel held in memory.
pub fn metadata_from_wheel(bytes: &[u8]) -> Result<Vec<u8>, ZipError> {
    let dir = find_directory(bytes, 0)?;
    let start = usize::try_from(dir.offset).map_err(|_| ZipError::Truncated)?;
    let end = start
        .checked_add(usize::try_from(dir.size).map_err(|_| ZipError::Truncated)?)
        .ok_or(ZipError::Truncated)?;
    let member = find_metadata(bytes.get(start..end).ok_or(ZipError::Truncated)?)?;
    let at = usize::try_from(member.local_header_offset).map_err(|_| ZipError::Truncated)?;
    read_member(bytes.get(at..).ok_or(ZipError::Truncated)?, &member)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metadata_zip_bomb_stops_at_the_cap() {
        use std::io::Write;
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..20 {
            encoder.write_all(&zeros).expect("deflate");
        }
        let data = encoder.finish().expect("deflate");
        let name = b"a-1.dist-info/METADATA";
        let mut local = Vec::new();
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&[0u8; 22]);
        local.extend_from_slice(&(name.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(name);
        local.extend_from_slice(&data);
        let member = Member {
            method: 8,
            compressed_size: data.len() as u64,
            local_header_offset: 0,
            crc32: 0,
            size: 0,
        };
        assert_eq!(read_member(&local, &member), Err(ZipError::TooLarge));
    }

    fn u16le(v: u16) -> [u8; 2] {
        v.to_le_bytes()
    }
    fn u32le(v: u32) -> [u8; 4] {
        v.to_le_bytes()
    }
    fn u64le(v: u64) -> [u8; 8] {
        v.to_le_bytes()
    }

    /// A stored (uncompressed) archive with one member, written with zip64
    /// records the way large CUDA wheels are.
    fn zip64_archive(name: &str, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        // Local header.
        out.extend(u32le(0x0403_4b50));
        out.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(u32le(0)); // crc (not checked)
        out.extend(u32le(data.len() as u32));
        out.extend(u32le(data.len() as u32));
        out.extend(u16le(name.len() as u16));
        out.extend(u16le(0));
        out.extend(name.as_bytes());
        out.extend(data);
        let cd_offset = out.len() as u64;
        // Central directory entry with the offset moved to the zip64 extra.
        out.extend(u32le(0x0201_4b50));
        out.extend([45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(u32le(0));
        out.extend(u32le(data.len() as u32));
        out.extend(u32le(data.len() as u32));
        out.extend(u16le(name.len() as u16));
        out.extend(u16le(12)); // extra length
        out.extend(u16le(0));
        out.extend([0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(u32le(0xFFFF_FFFF)); // local header offset: see extra
        out.extend(name.as_bytes());
        out.extend(u16le(1));
        out.extend(u16le(8));
        out.extend(u64le(0));
        let cd_size = out.len() as u64 - cd_offset;
        let eocd64 = out.len() as u64;
        out.extend(u32le(0x0606_4b50));
        out.extend(u64le(44));
        out.extend([45, 0, 45, 0]);
        out.extend(u32le(0));
        out.extend(u32le(0));
        out.extend(u64le(1));
        out.extend(u64le(1));
        out.extend(u64le(cd_size));
        out.extend(u64le(cd_offset));
        out.extend(u32le(0x0706_4b50));
        out.extend(u32le(0));
        out.extend(u64le(eocd64));
        out.extend(u32le(1));
        out.extend(u32le(0x0605_4b50));
        out.extend([0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
        out.extend(u32le(0xFFFF_FFFF));
        out.extend(u32le(0xFFFF_FFFF));
        out.extend(u16le(0));
        out
    }

    #[test]
    fn reads_metadata_through_zip64_records() {
        let bytes = zip64_archive("big-1.0.dist-info/METADATA", b"Name: big\n");
        assert_eq!(metadata_from_wheel(&bytes).unwrap(), b"Name: big\n");
        // From a tail only, as after a suffix range request.
        let tail_start = 20;
        let dir = find_directory(&bytes[tail_start..], tail_start as u64).unwrap();
        assert_eq!(dir.offset, 30 + 26 + 10);
    }

    #[test]
    fn nested_metadata_is_not_the_wheel_metadata() {
        let bytes = zip64_archive("pkg/vendored-1.0.dist-info/METADATA", b"x");
        assert_eq!(metadata_from_wheel(&bytes), Err(ZipError::NoMetadata));
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(metadata_from_wheel(b"not a zip"), Err(ZipError::NoEnd));
        assert!(metadata_from_wheel(&[0x50, 0x4b, 0x05, 0x06, 0, 0]).is_err());
    }
}
