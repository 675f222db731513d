//! The protocol's scripts (`lua/`, shared with the other clients) and their calls.

use crate::error::Error;
use crate::space::{Space, keys};
use crate::store::{Grant, Listed, Listing, Ticket};
use redis::{Cmd, FromRedisValue, Script};
use std::sync::LazyLock;

static ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/acquire.lua")));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../lua/renew.lua")));
static RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/release.lua")));

const ACQUIRE_SRC: &str = include_str!("../lua/acquire.lua");
const RENEW_SRC: &str = include_str!("../lua/renew.lua");
const RELEASE_SRC: &str = include_str!("../lua/release.lua");
static LIST: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../lua/list.lua")));
const LIST_SRC: &str = include_str!("../lua/list.lua");

/// One script call: the script, its keys (the space's four) and its arguments.
pub(crate) struct Call {
    script: &'static Script,
    source: &'static str,
    keys: [String; 4],
    args: Vec<String>,
}

impl Call {
    /// `acquire.lua` for `space`, with the lease's `token`.
    pub fn acquire<C>(space: &Space<C>, token: &str) -> Call {
        let args = vec![
            space.name.clone(),
            space.capacity().to_string(),
            space.ttl_ms.to_string(),
            space.skew_ms.to_string(),
            token.to_string(),
            space.holder_description(),
            space.layout_text(),
        ];
        Call {
            script: &ACQUIRE,
            source: ACQUIRE_SRC,
            keys: keys(&space.name),
            args,
        }
    }

    /// `renew.lua` for the lease `ticket` (its next token, `''` for none, last).
    pub fn renew(ticket: &Ticket, ttl: u64) -> Call {
        let args = vec![
            ticket.space.clone(),
            ticket.node.to_string(),
            ticket.token.clone(),
            ttl.to_string(),
            ticket.next.clone().unwrap_or_default(),
        ];
        Call {
            script: &RENEW,
            source: RENEW_SRC,
            keys: keys(&ticket.space),
            args,
        }
    }

    /// `release.lua` for the lease `ticket` (either of its tokens), which issued up to
    /// `issued`.
    pub fn release(ticket: &Ticket, issued: u64) -> Call {
        let args = vec![
            ticket.space.clone(),
            ticket.node.to_string(),
            ticket.token.clone(),
            issued.to_string(),
            ticket.next.clone().unwrap_or_default(),
        ];
        Call {
            script: &RELEASE,
            source: RELEASE_SRC,
            keys: keys(&ticket.space),
            args,
        }
    }

    /// `list.lua` for the space named `space`.
    pub fn list(space: &str) -> Call {
        Call {
            script: &LIST,
            source: LIST_SRC,
            keys: keys(space),
            args: vec![space.to_string()],
        }
    }

    /// `EVALSHA` (cached) or `EVAL` (the source, which also caches it on the node that
    /// runs it: on a cluster, the node of the space's hash slot).
    fn cmd(&self, by_hash: bool) -> Cmd {
        let mut cmd = if by_hash {
            let mut c = redis::cmd("EVALSHA");
            c.arg(self.script.get_hash());
            c
        } else {
            let mut c = redis::cmd("EVAL");
            c.arg(self.source);
            c
        };
        cmd.arg(self.keys.len()).arg(&self.keys).arg(&self.args);
        cmd
    }

    /// Runs the call, mapping the protocol's code words to their errors.
    pub fn run<T: FromRedisValue>(&self, con: &mut dyn redis::ConnectionLike) -> Result<T, Error> {
        match self.cmd(true).query(con) {
            Err(e) if is_noscript(&e) => self.cmd(false).query(con),
            other => other,
        }
        .map_err(Error::from_script)
    }

    /// [`run`](Self::run) on an async connection.
    #[cfg(feature = "tokio")]
    pub async fn run_async<T: FromRedisValue>(
        &self,
        con: &mut (impl redis::aio::ConnectionLike + Send),
    ) -> Result<T, Error> {
        let first = self.cmd(true).query_async(con).await;
        match first {
            Err(e) if is_noscript(&e) => self.cmd(false).query_async(con).await,
            other => other,
        }
        .map_err(Error::from_script)
    }
}

fn is_noscript(e: &redis::RedisError) -> bool {
    e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
}

impl Grant {
    /// The grant from `acquire.lua`'s reply.
    pub(crate) fn from_reply(reply: Vec<u64>) -> Result<Grant, Error> {
        match reply[..] {
            [node, not_before, until, now] => Ok(Grant {
                node,
                not_before,
                until,
                now,
            }),
            _ => Err(Error::Reply {
                message: format!("acquire.lua returned {} numbers, not 4", reply.len()),
            }),
        }
    }
}

/// A number of `list.lua`'s reply: an integer, or a string that is one, or empty (`None`).
fn listed_number(value: &redis::Value) -> Result<Option<u64>, Error> {
    let text = match value {
        redis::Value::Int(v) => return Ok(u64::try_from(*v).ok()),
        redis::Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        redis::Value::Nil => return Ok(None),
        other => {
            return Err(Error::Reply {
                message: format!("list.lua returned {other:?} where a number belongs"),
            });
        }
    };
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| Error::Reply {
        message: format!("list.lua returned '{text}' where a number belongs"),
    })
}

/// The listing from `list.lua`'s reply.
pub(crate) fn listing(reply: Vec<redis::Value>) -> Result<Listing, Error> {
    let short = || Error::Reply {
        message: format!("list.lua returned {} values, not 6 + 3 per id", reply.len()),
    };
    if reply.len() < 6 || !(reply.len() - 6).is_multiple_of(3) {
        return Err(short());
    }
    let n = |i: usize| listed_number(&reply[i]);
    let mut ids = Vec::new();
    for id in reply[6..].chunks(3) {
        let holder = match &id[2] {
            redis::Value::BulkString(b) if !b.is_empty() => {
                Some(String::from_utf8_lossy(b).into_owned())
            }
            _ => None,
        };
        ids.push(Listed {
            node: listed_number(&id[0])?.ok_or_else(short)?,
            until: listed_number(&id[1])?.ok_or_else(short)?,
            holder,
        });
    }
    Ok(Listing {
        now: n(0)?.ok_or_else(short)?,
        capacity: n(1)?,
        ttl_ms: n(2)?,
        skew_ms: n(3)?,
        created: n(4)?,
        next: n(5)?,
        ids,
    })
}

/// The new lease end from `renew.lua`'s reply.
pub(crate) fn renewed_until(reply: Vec<u64>) -> Result<u64, Error> {
    match reply[..] {
        [until, _now] => Ok(until),
        _ => Err(Error::Reply {
            message: format!("renew.lua returned {} numbers, not 2", reply.len()),
        }),
    }
}

/// A token no other lease has: 128 bits from the operating system's random source, so
/// that two copies of one process (a snapshot resumed twice) draw different tokens. Where
/// that source fails, the process's randomly keyed hashers over the time, the pid and a
/// counter.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = hashed_token();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hashed_token() -> [u8; 16] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(count);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens are 32 hex digits, and no two are alike, from either source.
    #[test]
    fn tokens_are_128_bits_each_new() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let t = new_token();
            assert_eq!(t.len(), 32, "{t}");
            assert!(t.bytes().all(|b| b.is_ascii_hexdigit()), "{t}");
            assert!(seen.insert(t));
            assert!(seen.insert(format!("{:?}", hashed_token())));
        }
    }
}
