//! PostgreSQL as a store of leases (feature `postgres`): the SQL of `postgres/`, run as
//! it is, over `tokio-postgres` on a private single-thread runtime so that every call is
//! bounded by a timeout.

use crate::error::Error;
use crate::space::Space;
#[cfg(feature = "tokio")]
use crate::store::AsyncStore;
use crate::store::{Grant, Listed, Listing, Store, Ticket};
use std::future::Future;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};

const CONNECT: &str = include_str!("../../postgres/connect.sql");
const SETUP: &str = include_str!("../../postgres/setup.sql");
const ACQUIRE: &str = include_str!("../../postgres/acquire.sql");
const RENEW: &str = include_str!("../../postgres/renew.sql");
const RELEASE: &str = include_str!("../../postgres/release.sql");
const LIST: &str = include_str!("../../postgres/list.sql");

/// A PostgreSQL database holding spaces in the tables of one schema (feature
/// `postgres`). Pass it to [`Lease::acquire`](crate::Lease::acquire) as a Redis client
/// would be.
///
/// [`setup`](Postgres::setup) creates the schema, its tables and functions (idempotent;
/// needs `CREATE` on the database, no superuser). Every time a lease uses is the
/// database's clock (`clock_timestamp()`).
///
/// ```no_run
/// use snowdrift::Layout;
/// use snowdrift_lease::{Lease, Postgres, Space};
/// let config: tokio_postgres::Config = "host=127.0.0.1 user=app dbname=app".parse()?;
/// let store = Postgres::new(config, "snowdrift");
/// store.setup()?; // once per database; running it again changes nothing
/// let lease = Lease::acquire(&store, &Space::new("ids:orders", Layout::TWITTER))?;
/// let id = lease.generator().next()?;
/// lease.release()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Postgres {
    config: tokio_postgres::Config,
    schema: String,
}

/// A connection to the [`Postgres`] store, with its own single-thread runtime.
pub struct PostgresConnection {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
    timeout: Duration,
}

impl std::fmt::Debug for PostgresConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresConnection")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Postgres {
    /// The store of the database `config` connects to (without TLS), its tables in
    /// `schema` (any name; created by [`setup`](Postgres::setup)).
    pub fn new(config: tokio_postgres::Config, schema: impl Into<String>) -> Self {
        Postgres {
            config,
            schema: schema.into(),
        }
    }

    /// The schema of the tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Creates the schema, the tables and the functions where missing, and replaces the
    /// functions (`postgres/setup.sql`). Idempotent; concurrent runs wait for each other.
    pub fn setup(&self) -> Result<(), Error> {
        let mut con = Store::connect(self, Duration::from_secs(30))?;
        let client = &con.client;
        let limit = con.timeout;
        bounded(&mut con.runtime, limit, async {
            client.batch_execute(SETUP).await.map_err(from_sql)
        })
    }
}

/// Runs `f` on `runtime`, failing after `limit`.
fn bounded<T>(
    runtime: &mut tokio::runtime::Runtime,
    limit: Duration,
    f: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match runtime.block_on(async { tokio::time::timeout(limit, f).await }) {
        Ok(result) => result,
        Err(_) => Err(Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no reply from postgres within {} ms", limit.as_millis()),
        ))),
    }
}

/// The protocol's code words (`LEASED`, `CONFIG`, `LOST`, at the start of an exception's
/// message) become their variants, without the code word.
fn from_sql(e: tokio_postgres::Error) -> Error {
    let Some(db) = e.as_db_error() else {
        return Error::Postgres(e);
    };
    let message = db.message();
    if *db.code() == SqlState::RAISE_EXCEPTION
        && let Some((word, rest)) = message.split_once(' ')
    {
        let message = rest.to_string();
        match word {
            "LEASED" => return Error::AllLeased { message },
            "CONFIG" => return Error::Config { message },
            "LOST" => return Error::Lost { message },
            _ => {}
        }
    }
    Error::Postgres(e)
}

/// What the database said, when `e` says the lease functions or tables are missing or
/// the role may not use them: PostgreSQL skips a schema of `search_path` that does not
/// exist or that the role has no USAGE on, so both read "function snowdrift_acquire(...)
/// does not exist" (with a hint about casts that does not apply).
fn not_set_up(e: &Error) -> Option<String> {
    let Error::Postgres(e) = e else { return None };
    let db = e.as_db_error()?;
    let code = db.code();
    let missing = *code == SqlState::UNDEFINED_FUNCTION
        || *code == SqlState::UNDEFINED_TABLE
        || *code == SqlState::INSUFFICIENT_PRIVILEGE;
    (missing && db.message().contains("snowdrift_"))
        .then(|| format!("{}, SQLSTATE {}", db.message(), code.code()))
}

/// A failed call's error; when the lease functions are missing or out of the role's
/// reach, says so, naming the schema (the session's, from `connect.sql`).
async fn explain(client: &tokio_postgres::Client, e: tokio_postgres::Error) -> Error {
    let e = from_sql(e);
    let Some(said) = not_set_up(&e) else {
        return e;
    };
    let schema: String = match client
        .query_typed("SELECT current_setting('snowdrift.schema', true)", &[])
        .await
    {
        Ok(rows) => rows
            .first()
            .and_then(|r| r.try_get::<_, Option<String>>(0).ok().flatten())
            .unwrap_or_default(),
        Err(_) => return e,
    };
    Error::NotSetUp {
        message: format!(
            "the snowdrift lease functions are not in schema \"{schema}\", or this role may not \
             use them: run setup (Postgres::setup, or lease/postgres/setup.sql) for that schema, \
             or grant this role USAGE on the schema and the rights on its tables \
             (postgres: {said})"
        ),
    }
}

fn int(v: u64) -> Result<i64, Error> {
    i64::try_from(v).map_err(|_| Error::invalid(format!("{v} does not fit a PostgreSQL bigint")))
}

/// Runs one statement of `postgres/` with its parameters (one round trip), returning its
/// one row's `bigint` columns.
async fn call(
    client: &tokio_postgres::Client,
    sql: &'static str,
    params: &[(&(dyn ToSql + Sync), Type)],
    what: &str,
) -> Result<Vec<u64>, Error> {
    let rows = match client.query_typed(sql, params).await {
        Ok(rows) => rows,
        Err(e) => return Err(explain(client, e).await),
    };
    let reply = |message: String| Error::Reply { message };
    let row = match &rows[..] {
        [row] => row,
        _ => return Err(reply(format!("{what} returned {} rows, not 1", rows.len()))),
    };
    (0..row.len())
        .map(|i| {
            let v: i64 = row
                .try_get(i)
                .map_err(|e| reply(format!("{what}: column {i}: {e}")))?;
            u64::try_from(v).map_err(|_| reply(format!("{what}: column {i} is {v}")))
        })
        .collect()
}

/// `connect.sql`: the session's tables are those of `schema` (the connection is the
/// store's own).
async fn use_schema(client: &tokio_postgres::Client, schema: &str) -> Result<(), Error> {
    let (schema, local): (&(dyn ToSql + Sync), &(dyn ToSql + Sync)) = (&schema, &false);
    client
        .query_typed(CONNECT, &[(schema, Type::TEXT), (local, Type::BOOL)])
        .await
        .map_err(from_sql)
        .map(drop)
}

/// The arguments of `acquire.sql`, taken from the space before the call.
struct Acquire {
    space: String,
    capacity: i64,
    ttl: i64,
    skew: i64,
    token: String,
    holder: String,
    layout: String,
}

impl Acquire {
    fn new<C>(space: &Space<C>, token: &str) -> Result<Acquire, Error> {
        Ok(Acquire {
            space: space.name.clone(),
            capacity: int(space.capacity())?,
            ttl: int(space.ttl_ms)?,
            skew: int(space.skew_ms)?,
            token: token.to_string(),
            holder: space.holder_description(),
            layout: space.layout_text(),
        })
    }

    async fn run(self, client: &tokio_postgres::Client) -> Result<Grant, Error> {
        let params: [(&(dyn ToSql + Sync), Type); 7] = [
            (&self.space, Type::TEXT),
            (&self.capacity, Type::INT8),
            (&self.ttl, Type::INT8),
            (&self.skew, Type::INT8),
            (&self.token, Type::TEXT),
            (&self.holder, Type::TEXT),
            (&self.layout, Type::TEXT),
        ];
        match call(client, ACQUIRE, &params, "acquire.sql").await?[..] {
            [node, not_before, until, now] => Ok(Grant {
                node,
                not_before,
                until,
                now,
            }),
            ref other => Err(Error::Reply {
                message: format!("acquire.sql returned {} numbers, not 4", other.len()),
            }),
        }
    }
}

/// The arguments of renew.sql and release.sql on the lease `ticket`: the space, the node
/// id, the token, one number (the TTL, or the newest ID's time) and the next token (`''`
/// for none), in this order.
struct LeaseArgs<'a> {
    ticket: &'a Ticket,
    node: i64,
    number: i64,
    next: &'a str,
}

impl<'a> LeaseArgs<'a> {
    fn new(ticket: &'a Ticket, number: u64) -> Result<Self, Error> {
        Ok(LeaseArgs {
            ticket,
            node: int(ticket.node)?,
            number: int(number)?,
            next: ticket.next.as_deref().unwrap_or_default(),
        })
    }

    fn params(&self) -> [(&(dyn ToSql + Sync), Type); 5] {
        [
            (&self.ticket.space, Type::TEXT),
            (&self.node, Type::INT8),
            (&self.ticket.token, Type::TEXT),
            (&self.number, Type::INT8),
            (&self.next, Type::TEXT),
        ]
    }
}

async fn renew(
    client: &tokio_postgres::Client,
    ticket: &Ticket,
    ttl_ms: u64,
) -> Result<u64, Error> {
    let args = LeaseArgs::new(ticket, ttl_ms)?;
    match call(client, RENEW, &args.params(), "renew.sql").await?[..] {
        [until, _now] => Ok(until),
        ref other => Err(Error::Reply {
            message: format!("renew.sql returned {} numbers, not 2", other.len()),
        }),
    }
}

async fn release(
    client: &tokio_postgres::Client,
    ticket: &Ticket,
    issued_ms: u64,
) -> Result<bool, Error> {
    let args = LeaseArgs::new(ticket, issued_ms)?;
    let rows = match client.query_typed(RELEASE, &args.params()).await {
        Ok(rows) => rows,
        Err(e) => return Err(explain(client, e).await),
    };
    let released: Option<i32> = rows.first().and_then(|r| r.try_get(0).ok());
    Ok(released == Some(1))
}

async fn list(client: &tokio_postgres::Client, space: &str) -> Result<Listing, Error> {
    let space: &(dyn ToSql + Sync) = &space;
    let rows = match client.query_typed(LIST, &[(space, Type::TEXT)]).await {
        Ok(rows) => rows,
        Err(e) => return Err(explain(client, e).await),
    };
    let reply = |message: String| Error::Reply { message };
    let [row] = &rows[..] else {
        return Err(reply(format!(
            "list.sql returned {} rows, not 1",
            rows.len()
        )));
    };
    let get = |i: usize| -> Result<Option<u64>, Error> {
        let v: Option<i64> = row
            .try_get(i)
            .map_err(|e| reply(format!("list.sql: column {i}: {e}")))?;
        Ok(v.and_then(|v| u64::try_from(v).ok()))
    };
    let column = |i: usize| -> Result<Vec<i64>, Error> {
        row.try_get(i)
            .map_err(|e| reply(format!("list.sql: column {i}: {e}")))
    };
    let (nodes, untils) = (column(6)?, column(7)?);
    let holders: Vec<String> = row
        .try_get(8)
        .map_err(|e| reply(format!("list.sql: column 8: {e}")))?;
    let ids = nodes
        .iter()
        .zip(&untils)
        .zip(holders)
        .map(|((&node, &until), holder)| Listed {
            node: u64::try_from(node).unwrap_or_default(),
            until: u64::try_from(until).unwrap_or_default(),
            holder: Some(holder).filter(|h| !h.is_empty()),
        })
        .collect();
    let settings = [get(1)?, get(2)?, get(3)?, get(4)?, get(5)?];
    Ok(Listing::from_reply(
        get(0)?.unwrap_or_default(),
        settings,
        ids,
    ))
}

impl Store for Postgres {
    type Connection = PostgresConnection;

    fn connect(&self, timeout: Duration) -> Result<PostgresConnection, Error> {
        let mut runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(Error::Io)?;
        let config = self.config.clone();
        let (client, connection) = bounded(&mut runtime, timeout, async {
            config
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(from_sql)
        })?;
        // Driven while each call runs (`block_on`); ends when the client is dropped.
        runtime.spawn(connection);
        bounded(&mut runtime, timeout, use_schema(&client, &self.schema))?;
        Ok(PostgresConnection {
            runtime,
            client,
            timeout,
        })
    }

    fn set_timeout(connection: &mut PostgresConnection, timeout: Duration) -> Result<(), Error> {
        connection.timeout = timeout;
        Ok(())
    }

    fn acquire<C>(
        con: &mut PostgresConnection,
        space: &Space<C>,
        token: &str,
    ) -> Result<Grant, Error> {
        let call = Acquire::new(space, token)?;
        bounded(&mut con.runtime, con.timeout, call.run(&con.client))
    }

    fn renew(con: &mut PostgresConnection, ticket: &Ticket, ttl_ms: u64) -> Result<u64, Error> {
        bounded(
            &mut con.runtime,
            con.timeout,
            renew(&con.client, ticket, ttl_ms),
        )
    }

    fn release(
        con: &mut PostgresConnection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> Result<bool, Error> {
        bounded(
            &mut con.runtime,
            con.timeout,
            release(&con.client, ticket, issued_ms),
        )
    }

    fn list(con: &mut PostgresConnection, space: &str) -> Result<Listing, Error> {
        bounded(&mut con.runtime, con.timeout, list(&con.client, space))
    }
}

/// On the caller's tokio runtime (features `postgres` and `tokio`): the connection is a
/// task of that runtime, and the lease bounds every call with a timeout.
#[cfg(feature = "tokio")]
impl AsyncStore for Postgres {
    type Connection = tokio_postgres::Client;

    fn connect_async(&self) -> impl Future<Output = Result<Self::Connection, Error>> + Send {
        let (config, schema) = (self.config.clone(), self.schema.clone());
        async move {
            let (client, connection) = config
                .connect(tokio_postgres::NoTls)
                .await
                .map_err(from_sql)?;
            tokio::spawn(connection);
            use_schema(&client, &schema).await?;
            Ok(client)
        }
    }

    fn acquire_async<C>(
        con: &mut Self::Connection,
        space: &Space<C>,
        token: &str,
    ) -> impl Future<Output = Result<Grant, Error>> + Send {
        let call = Acquire::new(space, token);
        async move { call?.run(con).await }
    }

    fn renew_async(
        con: &mut Self::Connection,
        ticket: &Ticket,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<u64, Error>> + Send {
        renew(con, ticket, ttl_ms)
    }

    fn release_async(
        con: &mut Self::Connection,
        ticket: &Ticket,
        issued_ms: u64,
    ) -> impl Future<Output = Result<bool, Error>> + Send {
        release(con, ticket, issued_ms)
    }
}
