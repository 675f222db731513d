//! Redis as a store of leases: the protocol's Lua scripts (`lua/`, shared with the npm
//! package), their calls over a [`Connector`]'s connections, and their replies read.

use crate::connector::Connector;
use crate::error::Error;
use crate::space::Space;
use crate::store::{Grant, Listed, Listing, Store, Ticket};
use redis::{Cmd, FromRedisValue, Script};
use std::sync::LazyLock;
use std::time::Duration;

/// The source of the script `lua/<name>.lua`, as every client sends it: after
/// `lua/prelude.lua`, the functions every script uses.
macro_rules! script {
    ($name:literal) => {
        concat!(
            include_str!("../../lua/prelude.lua"),
            include_str!(concat!("../../lua/", $name, ".lua"))
        )
    };
}

/// The scripts' sources, each included once.
const ACQUIRE_SRC: &str = script!("acquire");
const RENEW_SRC: &str = script!("renew");
const RELEASE_SRC: &str = script!("release");
const LIST_SRC: &str = script!("list");

static ACQUIRE: LazyLock<Script> = LazyLock::new(|| Script::new(ACQUIRE_SRC));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(RENEW_SRC));
static RELEASE: LazyLock<Script> = LazyLock::new(|| Script::new(RELEASE_SRC));
static LIST: LazyLock<Script> = LazyLock::new(|| Script::new(LIST_SRC));

/// The names of a space's four keys, in the scripts' `KEYS` order (PROTOCOL.md, "Redis").
pub(crate) const KEY_NAMES: [&str; 4] = ["meta", "ends", "token", "holder"];

/// The Redis keys of the space named `space`, in the scripts' `KEYS` order: one hash tag,
/// so a cluster runs each script on one node.
pub(crate) fn keys(space: &str) -> [String; 4] {
    KEY_NAMES.map(|name| format!("{{{space}}}:{name}"))
}

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
        Call::on_lease(&RENEW, RENEW_SRC, ticket, ttl)
    }

    /// `release.lua` for the lease `ticket` (either of its tokens), which issued up to
    /// `issued`.
    pub fn release(ticket: &Ticket, issued: u64) -> Call {
        Call::on_lease(&RELEASE, RELEASE_SRC, ticket, issued)
    }

    /// A script on the lease `ticket`: the space, the node id, the token, one number (the
    /// TTL, or the newest ID's time) and the next token (`''` for none), in this order.
    fn on_lease(
        script: &'static Script,
        source: &'static str,
        ticket: &Ticket,
        number: u64,
    ) -> Call {
        let args = vec![
            ticket.space.clone(),
            ticket.node.to_string(),
            ticket.token.clone(),
            number.to_string(),
            ticket.next.clone().unwrap_or_default(),
        ];
        Call {
            script,
            source,
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
    let settings = [n(1)?, n(2)?, n(3)?, n(4)?, n(5)?];
    Ok(Listing::from_reply(n(0)?.ok_or_else(short)?, settings, ids))
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

/// Redis: the Lua scripts of `lua/` over a [`Connector`]'s connections.
impl<K: Connector> Store for K {
    type Connection = K::Connection;

    fn connect(&self, timeout: Duration) -> Result<Self::Connection, Error> {
        Ok(Connector::connect(self, timeout)?)
    }

    fn set_timeout(connection: &mut Self::Connection, timeout: Duration) -> Result<(), Error> {
        Ok(<K as Connector>::set_timeout(connection, timeout)?)
    }

    fn acquire<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> Result<Grant, Error> {
        Grant::from_reply(Call::acquire(space, token).run(connection)?)
    }

    fn renew(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> Result<u64, Error> {
        renewed_until(Call::renew(ticket, ttl_ms).run(connection)?)
    }

    fn release(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> Result<bool, Error> {
        Ok(Call::release(ticket, issued_ms).run::<i64>(connection)? == 1)
    }

    fn list(connection: &mut Self::Connection, space: &str) -> Result<Listing, Error> {
        listing(Call::list(space).run(connection)?)
    }
}

/// Redis on tokio: the Lua scripts over an [`AsyncConnector`](crate::AsyncConnector)'s
/// connections.
#[cfg(feature = "tokio")]
impl<K: crate::connector::AsyncConnector> crate::store::AsyncStore for K {
    type Connection = K::Connection;

    fn connect_async(
        &self,
    ) -> impl std::future::Future<Output = Result<Self::Connection, Error>> + Send {
        let connecting = crate::connector::AsyncConnector::connect_async(self);
        async move { Ok(connecting.await?) }
    }

    fn acquire_async<C>(
        connection: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> impl std::future::Future<Output = Result<Grant, Error>> + Send {
        let call = Call::acquire(space, token);
        async move { Grant::from_reply(call.run_async(connection).await?) }
    }

    fn renew_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> impl std::future::Future<Output = Result<u64, Error>> + Send {
        let call = Call::renew(ticket, ttl_ms);
        async move { renewed_until(call.run_async(connection).await?) }
    }

    fn release_async(
        connection: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> impl std::future::Future<Output = Result<bool, Error>> + Send {
        let call = Call::release(ticket, issued_ms);
        async move { Ok(call.run_async::<i64>(connection).await? == 1) }
    }

    fn timed_out(limit: Duration) -> Error {
        Error::Redis(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no reply from redis within {} ms", limit.as_millis()),
        )))
    }
}
