//! A network namespace joined to the host by a veth pair whose host end can be pulled (the
//! network cut off: packets dropped, connections hang), and TCP relays on the host end so
//! processes inside reach servers that listen on 127.0.0.1.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;

use tokio::net::{TcpListener, TcpStream};

/// A namespace with a link to the host; removed (with the link) on drop.
pub(crate) struct NetNs {
    pub(crate) name: String,
    host_if: String,
    /// The host's address on the link (reachable from inside).
    pub(crate) host_ip: Ipv4Addr,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("this test needs the `ip` program (iproute2): {e}"));
    assert!(
        out.status.success(),
        "ip {args:?} failed (this test needs root and network namespaces): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl NetNs {
    /// Create it: `ip netns add`, a veth pair, 10.213.X.1 on the host, 10.213.X.2 inside.
    pub(crate) fn create() -> NetNs {
        // SAFETY: geteuid has no preconditions.
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "this test needs root (it creates a network namespace with `ip netns`)"
        );
        let tag = std::process::id() % 0xffff;
        let subnet = (std::process::id() % 250) as u8 + 1;
        let name = format!("reagent-hubq-{tag:04x}");
        let (host_if, ns_if) = (format!("rq{tag:04x}h"), format!("rq{tag:04x}w"));
        let host_ip = Ipv4Addr::new(10, 213, subnet, 1);
        let ns = NetNs {
            name: name.clone(),
            host_if: host_if.clone(),
            host_ip,
        };
        ip(&["netns", "add", &name]);
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if, "netns", &name,
        ]);
        ip(&["addr", "add", &format!("{host_ip}/30"), "dev", &host_if]);
        ip(&["link", "set", &host_if, "up"]);
        let inside = format!("10.213.{subnet}.2/30");
        ip(&["-n", &name, "addr", "add", &inside, "dev", &ns_if]);
        ip(&["-n", &name, "link", "set", &ns_if, "up"]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        ns
    }

    /// Cut the link (packets in flight and later are lost; nothing is told to either side).
    pub(crate) fn cut(&self) {
        ip(&["link", "set", &self.host_if, "down"]);
    }

    /// Join it again.
    pub(crate) fn restore(&self) {
        ip(&["link", "set", &self.host_if, "up"]);
    }

    /// A command run inside the namespace.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// Relay connections to the host end's address (a free port) on to `target`; returns the
    /// address to use from inside.
    pub(crate) async fn relay(&self, target: SocketAddr) -> SocketAddr {
        let listener = TcpListener::bind((self.host_ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        addr
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and so the pair.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_if])
            .output();
    }
}
