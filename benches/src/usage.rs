//! What a process used: CPU time and resident memory, read from the kernel.

use std::time::Duration;

/// CPU time of a process (all its threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// User time.
    pub user: Duration,
    /// System time.
    pub system: Duration,
}

impl CpuTime {
    /// User plus system time.
    pub fn total(&self) -> Duration {
        self.user + self.system
    }

    /// `self - earlier`, saturating.
    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
}

fn rusage_self() -> Option<libc::rusage> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete `rusage` into the pointer it is given, which points to
    // memory of the right size and alignment; on failure (-1) the value is not read.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    // SAFETY: rc == 0 means the kernel filled the struct (and it was zeroed before anyway).
    (rc == 0).then(|| unsafe { ru.assume_init() })
}

/// CPU time of this process so far (zero if the kernel refuses to say).
pub fn self_cpu() -> CpuTime {
    rusage_self().map_or_else(CpuTime::default, |ru| CpuTime {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
    })
}

/// Peak resident set size of this process, in KiB (`ru_maxrss`).
pub fn peak_rss_kib() -> u64 {
    rusage_self().map_or(0, |ru| u64::try_from(ru.ru_maxrss).unwrap_or(0))
}

/// Current resident set size of this process, in KiB (`VmRSS` of `/proc/self/status`).
pub fn current_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| status_field_kib(&s, "VmRSS:"))
        .unwrap_or(0)
}

/// Bytes of heap the allocator has handed out and not had back (glibc `mallinfo2`: arena
/// chunks in use plus mmapped blocks), over all arenas; `None` on other C libraries. Set
/// against RSS it tells live data from allocator overhead (free chunks kept, per-thread
/// arenas).
pub fn heap_in_use_bytes() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct by value.
        let mi = unsafe { libc::mallinfo2() };
        Some(u64::try_from(mi.uordblks.saturating_add(mi.hblkhd)).unwrap_or(u64::MAX))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// The value in KiB of a `Name:   123 kB` line of `/proc/PID/status`.
pub fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Raise the soft limit on open files to the hard limit (1,000 concurrent runs need more than
/// the usual 1,024 descriptors). Returns the soft limit now in force.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    use rlimit_impl::{get, set};
    let (_, hard) = get()?;
    set(hard, hard)?;
    Ok(get()?.0)
}

mod rlimit_impl {
    pub(super) fn get() -> std::io::Result<(u64, u64)> {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is pointed at; it is a valid, owned value.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((rl.rlim_cur, rl.rlim_max))
    }

    pub(super) fn set(soft: u64, hard: u64) -> std::io::Result<()> {
        let rl = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: setrlimit only reads the struct it is pointed at.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work() {
        let before = self_cpu();
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let used = self_cpu().since(&before);
        assert!(used.total() >= Duration::from_millis(10), "{used:?}");
    }

    #[test]
    fn rss_is_read() {
        let now = current_rss_kib();
        assert!(now > 100, "{now}");
        assert!(peak_rss_kib() >= now);
        assert_eq!(
            status_field_kib("VmRSS:\t  1234 kB\n", "VmRSS:"),
            Some(1234)
        );
        assert_eq!(status_field_kib("VmHWM: 1 kB\n", "VmRSS:"), None);
        let before = heap_in_use_bytes().unwrap();
        let block = vec![1u8; 1 << 20];
        let during = heap_in_use_bytes().unwrap();
        std::hint::black_box(&block);
        // Other tests run concurrently in this process: allow for their small allocations.
        assert!(during >= before + 900 * 1024, "{before} {during}");
    }

    #[test]
    fn open_files_limit_can_be_raised() {
        let soft = raise_open_files_limit().unwrap();
        assert!(soft >= 1024, "{soft}");
    }
}
