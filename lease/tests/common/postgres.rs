//! PostgreSQL servers for the tests: `initdb` in a temp dir, `postgres` as a direct child
//! on a free port of 127.0.0.1 (as `nobody` through `setpriv` when the tests run as root),
//! polled with `pg_isready`, stopped by its pid and removed on drop. Every wait is bounded.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

const START_LIMIT: Duration = Duration::from_secs(20);
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// The role the tests lease as: it may create schemas in the database, nothing more.
pub const ROLE: &str = "app";

fn bindir() -> PathBuf {
    let out = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .expect("pg_config (apt-get install postgresql)");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// One PostgreSQL server: a data dir, a socket dir, a child process.
pub struct Pg {
    pub port: u16,
    dir: PathBuf,
    bin: PathBuf,
    root: bool,
    child: Option<Child>,
}

impl Pg {
    /// A server of its own dir and port, not started, without data.
    fn empty() -> Pg {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("snowdrift-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let pg = Pg {
            port: free_port(),
            dir,
            bin: bindir(),
            root: is_root(),
            child: None,
        };
        pg.own(&pg.dir.clone());
        pg
    }

    pub fn start() -> Pg {
        let mut pg = Pg::empty();
        let data = pg.data();
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8"])
            .args(["--locale=C.UTF-8", "--no-sync"])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.spawn();
        pg.psql(&format!(
            "CREATE ROLE {ROLE} LOGIN; GRANT CREATE ON DATABASE postgres TO {ROLE};"
        ));
        pg
    }

    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// `dir` belongs to the server's user, mode 0700.
    fn own(&self, dir: &Path) {
        if self.root {
            let ok = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(dir)
                .status()
                .expect("chown");
            assert!(ok.success());
        }
        let ok = Command::new("chmod")
            .arg("700")
            .arg(dir)
            .status()
            .expect("chmod");
        assert!(ok.success());
    }

    /// A PostgreSQL program, run as nobody when we are root (it execs: the pid is its own).
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    pub fn spawn(&mut self) {
        let mut cmd = self.command("postgres");
        cmd.arg("-D")
            .arg(self.data())
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-k")
            .arg(&self.dir)
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.child = Some(cmd.spawn().expect("postgres"));
        self.wait_ready(Instant::now(), "not ready");
    }

    /// Waits until the server answers `pg_isready`, at most START_LIMIT after `start`;
    /// panics saying it is `what` ("not ready") after that.
    fn wait_ready(&self, start: Instant, what: &str) {
        while start.elapsed() < START_LIMIT {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ready {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        panic!(
            "postgres on port {} {what} within {START_LIMIT:?}",
            self.port
        );
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    fn signal(pid: u32, signal: &str) {
        let _ = Command::new("kill")
            .args(["-s", signal, &pid.to_string()])
            .status();
    }

    /// The server and its backends (children of the postmaster).
    fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.pid()];
        if let Ok(out) = Command::new("pgrep")
            .args(["-P", &self.pid().to_string()])
            .output()
        {
            pids.extend(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter_map(|l| l.trim().parse::<u32>().ok()),
            );
        }
        pids
    }

    /// SIGSTOP to the server and every backend: connections stay open and silent.
    pub fn pause(&self) -> Vec<u32> {
        let pids = self.pids();
        for &p in &pids {
            Self::signal(p, "STOP");
        }
        pids
    }

    pub fn resume(pids: &[u32]) {
        for &p in pids {
            Self::signal(p, "CONT");
        }
    }

    /// Immediate stop (SIGQUIT): no checkpoint, the next start runs crash recovery.
    pub fn stop_immediate(&mut self) {
        if let Some(mut child) = self.child.take() {
            Self::signal(child.id(), "CONT");
            Self::signal(child.id(), "QUIT");
            let start = Instant::now();
            while start.elapsed() < STOP_LIMIT {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGKILL to one backend of the role the leases use: the postmaster resets every
    /// backend and runs crash recovery without restarting (same pid, same
    /// `pg_postmaster_start_time()`). Returns once the server answers again.
    pub fn kill_backend(&self) {
        let pid = self.psql(&format!(
            "SELECT pid FROM pg_stat_activity WHERE usename = '{ROLE}' ORDER BY backend_start LIMIT 1"
        ));
        assert!(!pid.is_empty(), "no backend of {ROLE} to kill");
        Self::signal(pid.parse().expect("a pid"), "KILL");
        let start = Instant::now();
        // The postmaster reaps the backend as it starts the reset.
        while Path::new(&format!("/proc/{pid}")).exists() && start.elapsed() < START_LIMIT {
            sleep(Duration::from_millis(5));
        }
        self.wait_ready(start, "not back");
    }

    /// `pg_basebackup` of the running server into `to` (WAL streamed, a fast checkpoint),
    /// with `extra` arguments.
    fn pg_basebackup(&self, to: &Path, extra: &[&str]) {
        let out = self
            .command("pg_basebackup")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .arg("-D")
            .arg(to)
            .args(["-X", "stream", "-c", "fast"])
            .args(extra)
            .output()
            .expect("pg_basebackup");
        assert!(
            out.status.success(),
            "pg_basebackup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A streaming standby of this server (a base backup with `-R`, started on a port of
    /// its own), once it has replayed everything committed here.
    pub fn standby(&self) -> Pg {
        let mut standby = Pg::empty();
        self.pg_basebackup(&standby.data(), &["-R"]);
        standby.spawn();
        standby
    }

    /// Stops a standby's replication (it keeps what it has replayed, and receives no
    /// more); returns once its WAL receiver is gone.
    pub fn detach(&self) {
        self.psql("ALTER SYSTEM SET primary_conninfo = ''");
        self.psql("SELECT pg_reload_conf()");
        let start = Instant::now();
        while self.psql("SELECT count(*) FROM pg_stat_wal_receiver") != "0" {
            assert!(
                start.elapsed() < START_LIMIT,
                "the WAL receiver did not stop"
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// A base backup of the running server, taken now, in `name` beside the data dir.
    pub fn base_backup(&self, name: &str) -> PathBuf {
        let to = self.dir.join(name);
        self.pg_basebackup(&to, &[]);
        to
    }

    /// Stops the server at once and starts it on `backup` instead of its data: every
    /// commit after the backup is gone.
    pub fn restore(&mut self, backup: &Path) {
        self.stop_immediate();
        let data = self.data();
        std::fs::rename(&data, self.dir.join("data.lost")).expect("move the data away");
        std::fs::rename(backup, &data).expect("put the backup in place");
        self.spawn();
    }

    /// Runs `sql` as the superuser.
    pub fn psql(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-X", "-q", "-A", "-t"])
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Runs `sql` as the superuser in a psql process of its own, not waited for.
    pub fn psql_background(&self, sql: &str) -> Child {
        Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-X", "-q", "-c", sql])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("psql")
    }

    /// The lease store of this server, as the unprivileged role.
    pub fn store(&self, schema: &str) -> snowdrift_lease::Postgres {
        let config = format!(
            "host=127.0.0.1 port={} user={ROLE} dbname=postgres connect_timeout=5",
            self.port
        )
        .parse()
        .expect("config");
        snowdrift_lease::Postgres::new(config, schema)
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        self.stop_immediate();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
