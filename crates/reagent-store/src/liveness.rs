//! Is the process that writes a run still alive?

use std::sync::OnceLock;

/// This machine's host name (empty when it cannot be read).
pub(crate) fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its whole length; gethostname writes at most that.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc != 0 {
            return String::new();
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    })
}

/// This process's id.
pub(crate) fn own_pid() -> i64 {
    i64::from(std::process::id())
}

/// Whether process `pid` on this host exists and is not a zombie.
pub(crate) fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself hold ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
        Err(_) if std::path::Path::new("/proc/self/stat").exists() => false,
        Err(_) => {
            // No /proc: signal 0 checks existence without sending anything.
            // SAFETY: kill with signal 0 has no effect on the target.
            let rc = unsafe { libc::kill(pid, 0) };
            rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
    }
}

/// Whether a `running` row written by `pid` on `host`, last heard of at `last_event_at` (epoch
/// ms), has lost its writer.
pub(crate) fn writer_gone(pid: i64, host: &str, last_event_at: i64, now_ms: i64) -> bool {
    let stale_ms = i64::try_from(crate::STALE_AFTER.as_millis()).unwrap_or(i64::MAX);
    if now_ms.saturating_sub(last_event_at) > stale_ms {
        return true;
    }
    host == host_name() && !pid_alive(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(pid_alive(own_pid()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i64::from(child.id());
        child.wait().unwrap();
        assert!(!pid_alive(pid));
        assert!(!pid_alive(-1));
    }

    #[test]
    fn silence_or_a_dead_pid_means_gone() {
        let now = crate::now_ms();
        assert!(!writer_gone(own_pid(), host_name(), now, now));
        assert!(writer_gone(own_pid(), host_name(), 0, now));
        // Another host's process cannot be checked: only silence counts.
        assert!(!writer_gone(
            i64::from(i32::MAX),
            "elsewhere.invalid",
            now,
            now
        ));
        assert!(writer_gone(i64::from(i32::MAX), host_name(), now, now));
    }
}
