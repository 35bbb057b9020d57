//! A private PostgreSQL cluster for tests: `initdb` in a temporary directory, run by an
//! unprivileged user, listening on `127.0.0.1` and a free port, stopped and removed on drop.
//!
//! As root, the cluster runs as `nobody` (`runuser -u nobody`; PostgreSQL refuses to run as
//! root), with the temporary directory handed to it; otherwise as the current user. The binaries
//! come from `$REAGENT_PG_BIN`, else the newest `/usr/lib/postgresql/*/bin`, else `PATH`
//! (`scripts/install-test-deps.sh` installs Debian's `postgresql-15` when missing). Nothing is
//! skipped: when PostgreSQL cannot be started the error names what is missing.

use std::io;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A running private PostgreSQL cluster.
pub struct PostgresCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_nobody: bool,
    databases: AtomicU32,
}

impl PostgresCluster {
    /// Start a new cluster (a few seconds: `initdb` plus start-up).
    pub fn start() -> io::Result<PostgresCluster> {
        let bin = find_bin()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let as_nobody = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new().prefix("reagent-pg-").tempdir()?;
        if as_nobody {
            run(
                Command::new("chown").arg("nobody:").arg(dir.path()),
                "chown",
            )?;
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
            .env("LC_ALL", "C");
        let port = free_port()?;
        let cluster = PostgresCluster {
            dir,
            bin,
            port,
            as_nobody,
            databases: AtomicU32::new(0),
        };
        cluster.exec(initdb, "initdb")?;
        cluster.pg_start()?;
        Ok(cluster)
    }

    /// Start the server on its data directory (it must be stopped).
    fn pg_start(&self) -> io::Result<()> {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=300",
            self.port,
            self.dir.path().display()
        );
        let mut start = Command::new(self.bin.join("pg_ctl"));
        start
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-t", "60", "-o", &options, "start"]);
        if let Err(e) = self.exec(start, "pg_ctl start") {
            let log =
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
            return Err(io::Error::other(format!("{e}\nserver log:\n{log}")));
        }
        Ok(())
    }

    /// Stop the server at once (`immediate`: every connection is cut, as in a crash), wait
    /// `down`, and start it again on the same port and data. For tests of reconnection.
    pub fn restart(&self, down: std::time::Duration) -> io::Result<()> {
        self.stop_server()?;
        std::thread::sleep(down);
        self.start_server()
    }

    /// Stop the server at once (`immediate`, as in a crash); [`PostgresCluster::start_server`]
    /// starts it again on the same port and data. For tests of outages.
    pub fn stop_server(&self) -> io::Result<()> {
        let mut stop = Command::new(self.bin.join("pg_ctl"));
        stop.arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"]);
        self.exec(stop, "pg_ctl stop").map(drop)
    }

    /// Start the server stopped by [`PostgresCluster::stop_server`] again.
    pub fn start_server(&self) -> io::Result<()> {
        self.pg_start()
    }

    /// One cluster shared by the tests of a process that hold it at the same time; a new one
    /// starts when the last holder has dropped it.
    pub fn shared() -> io::Result<Arc<PostgresCluster>> {
        static SHARED: Mutex<Weak<PostgresCluster>> = Mutex::new(Weak::new());
        let mut slot = SHARED
            .lock()
            .map_err(|_| io::Error::other("the shared PostgreSQL cluster's lock is poisoned"))?;
        if let Some(c) = slot.upgrade() {
            return Ok(c);
        }
        let c = Arc::new(PostgresCluster::start()?);
        *slot = Arc::downgrade(&c);
        Ok(c)
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// URL of the `postgres` database.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// Create a new empty database and return its URL.
    pub fn new_database(&self) -> io::Result<String> {
        let name = format!(
            "test_{}",
            self.databases.fetch_add(1, Ordering::Relaxed) + 1
        );
        let mut createdb = Command::new(self.bin.join("createdb"));
        createdb
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .arg(&name);
        run(&mut createdb, "createdb")?;
        Ok(self.url_of(&name))
    }

    fn url_of(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Run a PostgreSQL program as the cluster's user.
    fn exec(&self, cmd: Command, what: &str) -> io::Result<Output> {
        let mut cmd = if self.as_nobody {
            let mut r = Command::new("runuser");
            r.args(["-u", "nobody", "--"])
                .arg(cmd.get_program())
                .args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                if let Some(v) = v {
                    r.env(k, v);
                }
            }
            r
        } else {
            cmd
        };
        cmd.current_dir(self.dir.path());
        run(&mut cmd, what)
    }
}

impl Drop for PostgresCluster {
    fn drop(&mut self) {
        let mut stop = Command::new(self.bin.join("pg_ctl"));
        stop.arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"]);
        // Nothing to report to in a destructor: a stop that fails leaves a process that exits
        // with its removed data directory.
        let _ = self.exec(stop, "pg_ctl stop");
    }
}

fn run(cmd: &mut Command, what: &str) -> io::Result<Output> {
    let out = cmd.output().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot run {what} ({}): {e}; install PostgreSQL (scripts/install-test-deps.sh)",
                cmd.get_program().to_string_lossy()
            ),
        )
    })?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out)
}

/// The directory holding `initdb`, `pg_ctl` and `createdb`.
fn find_bin() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("REAGENT_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file());
    on_path.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            "PostgreSQL not found: no initdb in $REAGENT_PG_BIN, /usr/lib/postgresql/*/bin or PATH; \
             run scripts/install-test-deps.sh (installs postgresql-15)",
        )
    })
}

fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
