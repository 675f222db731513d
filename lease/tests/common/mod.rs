//! redis-server processes for the tests: on free ports of 127.0.0.1, without
//! persistence, stopped on drop. Every wait is bounded.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use snowdrift::Layout;

pub mod gated;
pub mod scenarios;

/// How long a server gets to answer PING, and a cluster to report `cluster_state:ok`.
const START_LIMIT: Duration = Duration::from_secs(5);
const CLUSTER_LIMIT: Duration = Duration::from_secs(15);

/// Wall time less a shared offset that a test steps back.
#[derive(Clone, Default)]
#[allow(dead_code)]
pub struct SteppedBack(pub std::sync::Arc<std::sync::atomic::AtomicU64>);

impl snowdrift::Clock for SteppedBack {
    fn now_ms(&self) -> u64 {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as u64;
        wall - self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The IDs of the tests: 41-bit ms since 2024, `node_bits`, 12-bit sequence.
pub fn layout(node_bits: u32) -> Layout {
    Layout::builder()
        .time_bits(41)
        .node_bits(node_bits)
        .sequence_bits(12)
        .epoch_ms(1_704_067_200_000)
        .build()
        .expect("layout")
}

/// A free port; with `cluster`, one whose bus port (+10000) is free too.
fn free_port(cluster: bool) -> u16 {
    for _ in 0..100 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local addr").port();
        if !cluster {
            return port;
        }
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", bus)).is_ok() {
            return port;
        }
    }
    panic!("no free port found in 100 tries");
}

/// One redis-server child process.
pub struct Server {
    pub port: u16,
    child: Option<Child>,
    dir: PathBuf,
    cluster: bool,
}

impl Server {
    /// A standalone server on a free port.
    pub fn start() -> Server {
        Self::start_on(free_port(false), false)
    }

    fn start_on(port: u16, cluster: bool) -> Server {
        let dir =
            std::env::temp_dir().join(format!("snowdrift-lease-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut server = Server {
            port,
            child: None,
            dir,
            cluster,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut cmd = Command::new("redis-server");
        cmd.args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]);
        if self.cluster {
            let conf = format!("nodes-{port}.conf");
            cmd.args(["--cluster-enabled", "yes", "--cluster-config-file", &conf]);
        }
        cmd.arg("--dir").arg(&self.dir);
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        self.child = Some(
            cmd.spawn()
                .expect("redis-server (apt-get install redis-server)"),
        );
        self.wait_ping();
    }

    fn wait_ping(&self) {
        let start = Instant::now();
        while start.elapsed() < START_LIMIT {
            if let Ok(client) = redis::Client::open(self.url())
                && let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200))
                && redis::cmd("PING").query::<String>(&mut con).is_ok()
            {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        panic!(
            "redis-server on port {} did not answer PING within {START_LIMIT:?}",
            self.port
        );
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("client")
    }

    /// A plain connection, for looking at the keys.
    pub fn connection(&self) -> redis::Connection {
        self.client()
            .get_connection_with_timeout(Duration::from_secs(2))
            .expect("connection")
    }

    /// Kills the server (SIGKILL): its data is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts an empty one on the same port (data loss).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A 3-master Redis Cluster without replicas.
pub struct Cluster {
    pub servers: Vec<Server>,
}

impl Cluster {
    pub fn start() -> Cluster {
        let servers: Vec<Server> = (0..3)
            .map(|_| Server::start_on(free_port(true), true))
            .collect();
        let mut cmd = Command::new("timeout");
        cmd.args(["30", "redis-cli", "--cluster", "create"]);
        for s in &servers {
            cmd.arg(format!("127.0.0.1:{}", s.port));
        }
        cmd.args(["--cluster-replicas", "0", "--cluster-yes"]);
        let out = cmd.stdin(Stdio::null()).output().expect("redis-cli");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let cluster = Cluster { servers };
        let start = Instant::now();
        'wait: while start.elapsed() < CLUSTER_LIMIT {
            for s in &cluster.servers {
                let info: String = redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query(&mut s.connection())
                    .unwrap_or_default();
                if !info.contains("cluster_state:ok") {
                    sleep(Duration::from_millis(50));
                    continue 'wait;
                }
            }
            return cluster;
        }
        panic!("the cluster did not reach cluster_state:ok within {CLUSTER_LIMIT:?}");
    }

    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(Server::url).collect()
    }
}

/// `n` leases of `space` taken by `n` threads at once; asserts that they hold the ids
/// `0..n` (under the space's region), each once.
pub fn acquire_concurrently<K: snowdrift_lease::Store + Sync>(
    client: &K,
    space: &snowdrift_lease::Space,
    n: u64,
) -> Vec<snowdrift_lease::Lease> {
    let leases: Vec<snowdrift_lease::Lease> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(move || snowdrift_lease::Lease::acquire(client, space).expect("acquire"))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let mut nodes: Vec<u64> = leases.iter().map(snowdrift_lease::Lease::node).collect();
    nodes.sort_unstable();
    assert_eq!(
        nodes,
        (0..n).map(|i| space.node_id(i)).collect::<Vec<u64>>()
    );
    leases
}
