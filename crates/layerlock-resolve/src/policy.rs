//! The release-age policy as a verdict per locked package: is the version
//! old enough at `now`, judged from the upload times of exactly the files
//! the lock pins? `compile` applies the same policy while resolving
//! (through [`CooldownPolicy::for_resolver`]).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use uv_normalize::PackageName;
use uv_pep440::Version;

use crate::{Cooldown, Resolution, Resolved};

/// A package (or one version of it) the cooldown does not apply to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exemption {
    pub package: PackageName,
    /// Only this version: the exemption stops applying when the lock moves
    /// to another one, so it cannot be forgotten in place.
    pub version: Option<Version>,
    pub reason: String,
    /// The exemption ends at this time.
    pub until: Option<Timestamp>,
}

impl Exemption {
    fn covers(&self, name: &PackageName, version: &Version) -> bool {
        self.package == *name && self.version.as_ref().is_none_or(|v| v == version)
    }

    fn in_force(&self, now: Timestamp) -> bool {
        self.until.is_none_or(|u| u >= now)
    }
}

/// The policy: nothing newly introduced younger than `min_age` at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CooldownPolicy {
    pub min_age: SignedDuration,
    pub now: Timestamp,
    pub exemptions: Vec<Exemption>,
    /// Files whose upload time cannot be found pass (else they fail).
    pub allow_missing_time: bool,
}

/// What the policy says about one locked version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    TooYoung,
    Exempt,
    ExemptionExpired,
    UnknownUploadTime,
    /// A locked file was uploaded after `now`: the lock cannot have been
    /// made at that time.
    NotYetUploaded,
}

impl Verdict {
    /// The name reports use (stable: part of the JSON report).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::TooYoung => "too young",
            Self::Exempt => "exempt",
            Self::ExemptionExpired => "exemption expired",
            Self::UnknownUploadTime => "unknown upload time",
            Self::NotYetUploaded => "not yet uploaded",
        }
    }

    pub fn fails(self) -> bool {
        !matches!(self, Self::Ok | Self::Exempt)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict with what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// When the newest locked file was uploaded.
    pub uploaded: Option<Timestamp>,
    /// When the version becomes old enough (the newest file's upload time
    /// plus the minimum age): a moment, not a day.
    pub eligible: Option<Timestamp>,
    /// Age at `now` in days, to a tenth; never negative.
    pub age_days: Option<f64>,
    pub note: Option<String>,
}

impl CooldownPolicy {
    /// What the resolver needs: the exemptions in force at `now`.
    pub fn for_resolver(&self) -> Cooldown {
        Cooldown {
            now: self.now,
            min_age: self.min_age,
            exempt: self
                .exemptions
                .iter()
                .filter(|e| e.in_force(self.now))
                .map(|e| (e.package.clone(), e.version.clone()))
                .collect(),
            allow_missing_time: self.allow_missing_time,
        }
    }

    /// Judge `name` `version` whose locked files were uploaded at `times`
    /// (`None`: no upload time found for that file).
    pub fn judge(
        &self,
        name: &PackageName,
        version: &Version,
        times: &[Option<Timestamp>],
    ) -> Judgement {
        let missing = times.is_empty() || times.iter().any(Option::is_none);
        // The set is old enough once its newest file is.
        let uploaded = times.iter().flatten().max().copied();
        let eligible = uploaded.and_then(|t| t.checked_add(self.min_age).ok());
        let age_days = uploaded.map(|t| {
            let seconds = (self.now.as_second() - t.as_second()).max(0);
            (seconds as f64 / 8640.0).round() / 10.0
        });
        let exemption = self.exemptions.iter().find(|e| e.covers(name, version));
        let other_version = || {
            self.exemptions
                .iter()
                .find(|e| e.package == *name && e.version.is_some())
                .and_then(|e| e.version.as_ref())
                .map(|v| format!("the exemption names version {v}, the lock has {version}"))
        };
        let young = eligible.is_some_and(|e| e > self.now);
        let (verdict, note) = if uploaded.is_some_and(|t| t > self.now) {
            (
                Verdict::NotYetUploaded,
                Some(format!(
                    "a locked file was uploaded after {}",
                    self.now.strftime("%Y-%m-%d %H:%M UTC")
                )),
            )
        } else if let Some(e) = exemption.filter(|e| e.in_force(self.now)) {
            (Verdict::Exempt, Some(e.reason.clone()))
        } else if missing && !self.allow_missing_time {
            (
                Verdict::UnknownUploadTime,
                Some("no upload time for the locked files (simple API and JSON API)".to_string()),
            )
        } else if young {
            match exemption {
                Some(e) => (
                    Verdict::ExemptionExpired,
                    Some(format!(
                        "exemption expired on {} ({})",
                        e.until.map(day).unwrap_or_default(),
                        e.reason
                    )),
                ),
                None => (Verdict::TooYoung, other_version()),
            }
        } else {
            let note = exemption.map(|e| {
                format!(
                    "exemption expired on {}; no longer needed",
                    e.until.map(day).unwrap_or_default()
                )
            });
            (Verdict::Ok, note)
        };
        Judgement {
            verdict,
            uploaded,
            eligible,
            age_days,
            note,
        }
    }
}

/// A package the cooldown held back from a newer version.
#[derive(Debug, Clone)]
pub struct HeldBack {
    pub name: PackageName,
    pub chosen: Option<uv_pep440::Version>,
    pub skipped: uv_pep440::Version,
    pub eligible: Option<jiff::Timestamp>,
}

/// When the newest of `resolved`'s files becomes old enough: the version
/// counts once its earliest file does.
pub fn eligible_on(resolved: &Resolved, cooldown: &Cooldown) -> Option<jiff::Timestamp> {
    resolved
        .files
        .iter()
        .filter_map(|f| f.upload_time)
        .min()
        .and_then(|t| t.checked_add(cooldown.min_age).ok())
}

/// Kept pins (the request's preferences, chosen again) that are younger
/// than the cooldown's minimum age: the policy does not move them (they
/// are not newly introduced), but they are named, with when each becomes
/// eligible.
pub fn young_kept(
    resolution: &Resolution,
    preferences: &BTreeMap<PackageName, Version>,
    cooldown: &Cooldown,
) -> Vec<HeldBack> {
    resolution
        .packages
        .iter()
        .filter(|(name, r)| preferences.get(*name) == Some(&r.version))
        .filter_map(|(name, r)| {
            let when = eligible_on(r, cooldown).filter(|w| *w > cooldown.now)?;
            Some(HeldBack {
                name: name.clone(),
                chosen: Some(r.version.clone()),
                skipped: r.version.clone(),
                eligible: Some(when),
            })
        })
        .collect()
}

/// What the same resolution picks without the cooldown, compared with what
/// it picked under it.
pub fn held_back(with: &Resolution, without: &Resolution, cooldown: &Cooldown) -> Vec<HeldBack> {
    let mut out = Vec::new();
    for (name, free) in &without.packages {
        let chosen = with.packages.get(name).map(|r| r.version.clone());
        if chosen.as_ref() == Some(&free.version) {
            continue;
        }
        out.push(HeldBack {
            name: name.clone(),
            chosen,
            skipped: free.version.clone(),
            eligible: eligible_on(free, cooldown),
        });
    }
    out
}

fn day(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d").to_string()
}

/// A policy setting as written that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyTextError {
    #[error("`{0}` is not an age; write e.g. `7d`, `7 days`, `12h` or `P7D`")]
    Age(String),
    #[error("`{0}` is longer than a century; a cooldown is measured in days")]
    TooLong(String),
    #[error("`{0}` is not a timestamp; use RFC 3339 (2026-01-31T00:00:00Z) or a date (2026-01-31)")]
    Timestamp(String),
    #[error("{place}: `{package}` is not a package name")]
    Name { place: String, package: String },
    #[error("{0}: give the version once (`version = …` or PKG==VERSION)")]
    VersionTwice(String),
    #[error("{place}: `{version}` is not a version")]
    Version { place: String, version: String },
}

/// `7d`, `7 days`, `1w`, `12h`, `90m`, `P7D`, `PT12H`, `P1W`. Months and
/// years are refused (their length varies), and so is anything past a
/// century.
pub fn parse_age(text: &str) -> Result<SignedDuration, PolicyTextError> {
    let bad = || PolicyTextError::Age(text.to_string());
    let t = text.trim().to_ascii_lowercase();
    let split = |s: &str| -> Option<(String, String)> {
        let at = s.find(|c: char| !c.is_ascii_digit())?;
        Some((s[..at].to_string(), s[at..].trim().to_string()))
    };
    let (number, unit) = match t.strip_prefix('p') {
        // ISO 8601: PT12H and PT30M (hours, minutes), P7D and P1W (days,
        // weeks; P1M would be a month).
        Some(iso) => {
            let (time, units) = match iso.strip_prefix('t') {
                Some(time) => (time, ["h", "m"]),
                None => (iso, ["d", "w"]),
            };
            let (n, u) = split(time).ok_or_else(bad)?;
            if !units.contains(&u.as_str()) {
                return Err(bad());
            }
            (n, u)
        }
        None => split(&t).ok_or_else(bad)?,
    };
    let n: i64 = number.parse().map_err(|_| bad())?;
    let unit_seconds: i64 = match unit.as_str() {
        "w" | "week" | "weeks" => 7 * 86_400,
        "d" | "day" | "days" => 86_400,
        "h" | "hour" | "hours" => 3_600,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        _ => return Err(bad()),
    };
    n.checked_mul(unit_seconds)
        .filter(|s| *s <= 36_500 * 86_400)
        .map(SignedDuration::from_secs)
        .ok_or_else(|| PolicyTextError::TooLong(text.to_string()))
}

/// An RFC 3339 timestamp, or a date (its midnight, UTC).
pub fn parse_timestamp(text: &str) -> Result<Timestamp, PolicyTextError> {
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts);
    }
    text.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|date| date.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|zoned| zoned.timestamp())
        .ok_or_else(|| PolicyTextError::Timestamp(text.to_string()))
}

/// An `--exclude-newer` cutoff: a timestamp as written; a bare date
/// means the end of that day (UTC), as uv reads `--exclude-newer
/// 2026-11-01` (uv takes the machine's time zone; on a UTC machine, the
/// same moment), so a command copied from one tool to the other locks the
/// same versions.
pub fn parse_cutoff(text: &str) -> Result<Timestamp, PolicyTextError> {
    if let Ok(ts) = text.parse::<Timestamp>() {
        return Ok(ts);
    }
    text.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|date| date.tomorrow().ok())
        .and_then(|date| date.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|zoned| zoned.timestamp())
        .ok_or_else(|| PolicyTextError::Timestamp(text.to_string()))
}

/// `PKG` or `PKG==VERSION` (or `PKG` with `version`) as what an exemption
/// covers; `place` names where it was written, for errors.
pub fn exempt_target(
    package: &str,
    version: Option<&str>,
    place: &str,
) -> Result<(PackageName, Option<Version>), PolicyTextError> {
    let (name, pinned) = match package.split_once("==") {
        Some((name, v)) => (name.trim(), Some(v.trim())),
        None => (package.trim(), None),
    };
    let name = name
        .parse::<PackageName>()
        .map_err(|_| PolicyTextError::Name {
            place: place.to_string(),
            package: package.to_string(),
        })?;
    let version = match (pinned, version) {
        (Some(_), Some(_)) => return Err(PolicyTextError::VersionTwice(place.to_string())),
        (Some(v), None) | (None, Some(v)) => {
            Some(v.parse::<Version>().map_err(|_| PolicyTextError::Version {
                place: place.to_string(),
                version: v.to_string(),
            })?)
        }
        (None, None) => None,
    };
    Ok((name, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cutoff_date_is_the_end_of_that_day_as_uv_reads_it() {
        let end = parse_cutoff("2026-11-01").unwrap();
        assert_eq!(end.to_string(), "2026-11-02T00:00:00Z");
        let exact = parse_cutoff("2026-11-01T07:00:00Z").unwrap();
        assert_eq!(exact.to_string(), "2026-11-01T07:00:00Z");
        assert!(parse_cutoff("yesterday").is_err());
        // `--now` and `until` keep the start of the day.
        assert_eq!(
            parse_timestamp("2026-11-01").unwrap().to_string(),
            "2026-11-01T00:00:00Z"
        );
    }
    use std::str::FromStr;

    fn ts(s: &str) -> Timestamp {
        Timestamp::from_str(s).unwrap()
    }

    fn policy(exemptions: Vec<Exemption>) -> CooldownPolicy {
        CooldownPolicy {
            min_age: SignedDuration::from_hours(7 * 24),
            now: ts("2026-11-09T12:00:00Z"),
            exemptions,
            allow_missing_time: false,
        }
    }

    fn judge(p: &CooldownPolicy, version: &str, uploaded: &str) -> Judgement {
        p.judge(
            &PackageName::from_str("nixl-cu13").unwrap(),
            &Version::from_str(version).unwrap(),
            &[Some(ts(uploaded))],
        )
    }

    #[test]
    fn eligible_is_a_moment_not_a_day() {
        // Uploaded at 22:49: not eligible at midnight seven days later.
        let j = judge(&policy(vec![]), "1.5.2", "2026-11-02T22:49:00Z");
        assert_eq!(j.verdict, Verdict::TooYoung);
        assert_eq!(j.eligible, Some(ts("2026-11-09T22:49:00Z")));
        assert_eq!(j.age_days, Some(6.5));
    }

    #[test]
    fn an_exemption_for_one_version_stops_when_the_lock_moves() {
        let exemption = Exemption {
            package: PackageName::from_str("nixl-cu13").unwrap(),
            version: Some(Version::from_str("1.5.2").unwrap()),
            reason: "fixes the NIXL hang".into(),
            until: Some(ts("2026-11-15T00:00:00Z")),
        };
        let p = policy(vec![exemption]);
        let j = judge(&p, "1.5.2", "2026-11-08T00:00:00Z");
        assert_eq!(j.verdict, Verdict::Exempt);
        let j = judge(&p, "1.6.0", "2026-11-08T00:00:00Z");
        assert_eq!(j.verdict, Verdict::TooYoung);
        assert!(j.note.unwrap().contains("names version 1.5.2"));
        let resolver = p.for_resolver();
        assert_eq!(resolver.exempt.len(), 1);
    }

    #[test]
    fn a_file_from_after_now_is_not_a_negative_age() {
        let j = judge(&policy(vec![]), "1.0", "2026-11-09T12:00:30Z");
        assert_eq!(j.verdict, Verdict::NotYetUploaded);
        assert!(j.verdict.fails());
        assert_eq!(j.age_days, Some(0.0));
        assert!(j.age_days.unwrap().is_sign_positive());
    }

    #[test]
    fn unknown_time_fails_closed() {
        let p = policy(vec![]);
        let j = p.judge(
            &PackageName::from_str("a").unwrap(),
            &Version::from_str("1").unwrap(),
            &[None],
        );
        assert_eq!(j.verdict, Verdict::UnknownUploadTime);
        let j = p.judge(
            &PackageName::from_str("a").unwrap(),
            &Version::from_str("1").unwrap(),
            &[],
        );
        assert_eq!(j.verdict, Verdict::UnknownUploadTime);
    }

    #[test]
    fn ages_read_in_days_weeks_hours_minutes_and_iso_but_not_months() {
        let secs = |t: &str| parse_age(t).map(|d| d.as_secs());
        assert_eq!(secs("7d"), Ok(7 * 86_400));
        assert_eq!(secs(" 7 Days "), Ok(7 * 86_400));
        assert_eq!(secs("1w"), Ok(7 * 86_400));
        assert_eq!(secs("12h"), Ok(12 * 3_600));
        assert_eq!(secs("90m"), Ok(90 * 60));
        assert_eq!(secs("P7D"), Ok(7 * 86_400));
        assert_eq!(secs("P1W"), Ok(7 * 86_400));
        assert_eq!(secs("PT12H"), Ok(12 * 3_600));
        for bad in ["P1M", "1 month", "PT1D", "7", "d", "", "-7d", "1y"] {
            assert_eq!(
                parse_age(bad),
                Err(PolicyTextError::Age(bad.to_string())),
                "{bad}"
            );
        }
        assert_eq!(
            parse_age("36501d"),
            Err(PolicyTextError::TooLong("36501d".to_string()))
        );
        assert!(parse_age("99999999999999999w").is_err());
    }

    #[test]
    fn timestamps_are_rfc_3339_or_a_date_at_midnight_utc() {
        assert_eq!(
            parse_timestamp("2026-01-31"),
            parse_timestamp("2026-01-31T00:00:00Z")
        );
        assert!(parse_timestamp("31/01/2026").is_err());
    }

    #[test]
    fn an_exemption_names_a_package_and_at_most_one_version() {
        let (name, version) = exempt_target("Foo_Bar==1.0", None, "here").unwrap();
        assert_eq!(
            (name.as_ref(), version.map(|v| v.to_string())),
            ("foo-bar", Some("1.0".to_string()))
        );
        assert_eq!(
            exempt_target("foo", Some("2"), "here")
                .unwrap()
                .1
                .map(|v| v.to_string()),
            Some("2".to_string())
        );
        assert_eq!(
            exempt_target("foo==1", Some("2"), "here"),
            Err(PolicyTextError::VersionTwice("here".to_string()))
        );
        assert!(matches!(
            exempt_target("foo bar", None, "x"),
            Err(PolicyTextError::Name { .. })
        ));
        assert!(matches!(
            exempt_target("foo==x.y!", None, "x"),
            Err(PolicyTextError::Version { .. })
        ));
    }
}
