//! Running a program layerlock does not trust to behave: a `--python` that
//! is a wrapper, a git in a hostile repository. Every child runs in a
//! process group of its own, with bounds on its time and on the bytes read
//! from it; on a bound the whole group is killed, so a grandchild holding
//! the pipes (`sleep 300 &`) cannot keep layerlock waiting.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How much a child may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall time from the start.
    pub time: Duration,
    /// Bytes of stdout kept; one more and the child is stopped.
    pub stdout: usize,
    /// Bytes of stderr kept: the last ones (where a failure says why).
    /// The rest is read and dropped, never a reason to stop.
    pub stderr: usize,
}

/// A child that exited on its own.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// The last [`Limits::stderr`] bytes.
    pub stderr: Vec<u8>,
    /// More was written to stderr than was kept.
    pub stderr_cut: bool,
}

impl Finished {
    /// The kept stderr as text, trimmed, with `…` in front when cut.
    pub fn said(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let text = text.trim();
        if self.stderr_cut {
            format!("…{text}")
        } else {
            text.to_string()
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Stopped {
    #[error("cannot start it: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("it did not finish within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("it wrote more than {0} bytes of output")]
    TooLarge(usize),
}

/// After the child has exited, how long its pipes may stay open: a
/// grandchild outside its group (one that called `setsid`) can hold them.
const AFTER_EXIT: Duration = Duration::from_secs(2);

/// Run `cmd` with stdin from `input` (or none), within `limits`.
pub fn run(cmd: &mut Command, input: Option<Vec<u8>>, limits: Limits) -> Result<Finished, Stopped> {
    group_of_its_own(cmd);
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(Stopped::Spawn)?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A child that stops early closes the pipe; that is its answer.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let stdout = read_head(child.stdout.take(), limits.stdout);
    let stderr = read_tail(child.stderr.take(), limits.stderr);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                stop(&mut child);
                return Err(Stopped::Spawn(e));
            }
        }
        if stdout.over() {
            stop(&mut child);
            return Err(Stopped::TooLarge(limits.stdout));
        }
        if started.elapsed() >= limits.time {
            stop(&mut child);
            return Err(Stopped::TimedOut(limits.time));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // Whatever the child left running in its group goes with it: it
    // would otherwise hold the pipes open.
    kill_group(&child);
    let deadline = Instant::now() + AFTER_EXIT;
    let (out, over) = stdout.finish(deadline);
    if over {
        return Err(Stopped::TooLarge(limits.stdout));
    }
    let (err, cut) = stderr.finish(deadline);
    Ok(Finished {
        status,
        stdout: out,
        stderr: err,
        stderr_cut: cut,
    })
}

#[cfg(unix)]
fn group_of_its_own(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
fn group_of_its_own(_: &mut Command) {}

#[cfg(unix)]
fn kill_group(child: &Child) {
    // The group's id is the child's pid (`process_group(0)`); the kernel
    // does not hand that number to a new process while the group lives.
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_: &Child) {}

fn stop(child: &mut Child) {
    kill_group(child);
    let _ = child.kill();
    let _ = child.wait();
}

/// A pipe read on a thread of its own, so neither pipe can fill and block
/// the child while the other is read.
struct Reader {
    done: Receiver<(Vec<u8>, bool)>,
    over: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Reader {
    fn over(&self) -> bool {
        self.over.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What was read, and whether the bound was passed; what came by
    /// `deadline` when the pipe is still held open then.
    fn finish(self, deadline: Instant) -> (Vec<u8>, bool) {
        let wait = deadline.saturating_duration_since(Instant::now());
        self.done
            .recv_timeout(wait)
            .unwrap_or_else(|_| (Vec::new(), self.over()))
    }
}

/// The first `cap` bytes; one more sets the flag and stops reading.
fn read_head(pipe: Option<impl Read + Send + 'static>, cap: usize) -> Reader {
    spawn_reader(pipe, move |pipe, over| {
        let mut buf = Vec::new();
        let _ = pipe.take(cap as u64 + 1).read_to_end(&mut buf);
        let passed = buf.len() > cap;
        if passed {
            buf.truncate(cap);
            over.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        (buf, passed)
    })
}

/// The last `cap` bytes; the pipe is read to its end.
fn read_tail(pipe: Option<impl Read + Send + 'static>, cap: usize) -> Reader {
    spawn_reader(pipe, move |pipe, _| {
        let mut kept = Vec::new();
        let mut cut = false;
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => kept.extend_from_slice(&chunk[..n]),
            }
            if kept.len() > cap.saturating_mul(2).max(chunk.len()) {
                let drop = kept.len() - cap;
                kept.drain(..drop);
                cut = true;
            }
        }
        if kept.len() > cap {
            kept.drain(..kept.len() - cap);
            cut = true;
        }
        (kept, cut)
    })
}

fn spawn_reader<R: Read + Send + 'static>(
    pipe: Option<R>,
    read: impl FnOnce(&mut R, &std::sync::atomic::AtomicBool) -> (Vec<u8>, bool) + Send + 'static,
) -> Reader {
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (send, done) = mpsc::channel();
    let flag = std::sync::Arc::clone(&over);
    std::thread::spawn(move || {
        let result = match pipe {
            Some(mut pipe) => read(&mut pipe, &flag),
            None => (Vec::new(), false),
        };
        let _ = send.send(result);
    });
    Reader { done, over }
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    const ROOMY: Limits = Limits {
        time: Duration::from_secs(20),
        stdout: 1 << 20,
        stderr: 1 << 10,
    };

    #[test]
    fn output_and_status_come_back() {
        let done = run(&mut sh("echo out; echo err >&2; exit 3"), None, ROOMY).unwrap();
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.said(), "err");
        assert_eq!(done.status.code(), Some(3));
    }

    #[test]
    fn input_is_fed() {
        let done = run(&mut sh("cat"), Some(b"fed".to_vec()), ROOMY).unwrap();
        assert_eq!(done.stdout, b"fed");
    }

    #[test]
    fn a_grandchild_holding_stdout_does_not_hold_us() {
        let started = Instant::now();
        let done = run(&mut sh("sleep 300 & echo answered"), None, ROOMY).unwrap();
        assert_eq!(done.stdout, b"answered\n");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_hang_with_a_grandchild_is_cut_off_at_the_limit() {
        let limits = Limits {
            time: Duration::from_millis(300),
            ..ROOMY
        };
        let started = Instant::now();
        let err = run(&mut sh("sleep 300 & sleep 300"), None, limits).unwrap_err();
        assert!(matches!(err, Stopped::TimedOut(_)), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn endless_stdout_is_stopped_at_the_bound() {
        let err = run(&mut sh("yes"), None, ROOMY).unwrap_err();
        assert!(
            matches!(err, Stopped::TooLarge(n) if n == 1 << 20),
            "{err:?}"
        );
    }

    #[test]
    fn a_flood_of_stderr_keeps_its_last_words() {
        let script = "head -c 5000000 /dev/zero | tr '\\0' x >&2; echo ' the end' >&2; exit 1";
        let done = run(&mut sh(script), None, ROOMY).unwrap();
        assert!(done.stderr_cut);
        assert_eq!(done.stderr.len(), 1 << 10);
        assert!(done.said().ends_with("x the end"), "{}", done.said());
        assert!(done.said().starts_with('…'));
    }
}
