//! The one error type of the crate.

use std::fmt;

/// What went wrong with a lease: every message carries the numbers that explain it.
///
/// ```
/// use snowdrift_lease::Error;
/// let err = Error::Lapsed { node: 3, space: "ids:orders".into(), ttl_ms: 10_000, skew_ms: 1_000 };
/// assert_eq!(
///     err.to_string(),
///     "lease of node 3 of 'ids:orders' lapsed: no renewal succeeded for 9000 ms (ttl 10000 ms, skew 1000 ms)"
/// );
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Every node id of the space is held by a live lease
    /// (`all 32 node ids of 'ids:orders' are leased`).
    AllLeased {
        /// The message from the store, without its code word.
        message: String,
    },
    /// The space exists with another layout, region, TTL or skew: one space, one setting.
    Config {
        /// The message from the store, without its code word.
        message: String,
    },
    /// The store no longer records the node id as this lease's (it was taken over after
    /// the lease ended, a copy of this holder renewed it first, or the store lost its
    /// data). The generator is stopped.
    Lost {
        /// The message from the store, without its code word.
        message: String,
    },
    /// No renewal succeeded for `ttl - skew` ms: the generator is stopped.
    Lapsed {
        /// The node id.
        node: u64,
        /// The space's name.
        space: String,
        /// The space's TTL, in milliseconds.
        ttl_ms: u64,
        /// The space's skew allowance, in milliseconds.
        skew_ms: u64,
    },
    /// A new lease did not become usable (its fence past its `not_before`) in time.
    NotUsable {
        /// The node id.
        node: u64,
        /// The space's name.
        space: String,
        /// How long the lease was renewed while waiting, in milliseconds.
        waited_ms: u64,
    },
    /// The lease was released or abandoned by its holder.
    Stopped {
        /// The node id.
        node: u64,
        /// The space's name.
        space: String,
    },
    /// An option of the [`Space`](crate::Space) is out of range; nothing was sent to the store.
    Invalid {
        /// What is wrong, with the value and the allowed range.
        message: String,
    },
    /// The generator refused the lease (for example a node id outside the layout).
    Generator(snowdrift::Error),
    /// Redis failed or could not be reached.
    Redis(redis::RedisError),
    /// PostgreSQL failed or could not be reached (feature `postgres`). The message is
    /// the database's own, with its SQLSTATE, detail and hint.
    #[cfg(feature = "postgres")]
    Postgres(tokio_postgres::Error),
    /// The store is not set up for this client (feature `postgres`): the schema's lease
    /// functions are missing, or the role may not use them. The message names the schema
    /// and what to run.
    NotSetUp {
        /// What is missing, and what to do.
        message: String,
    },
    /// A store did not answer in time, its connection could not be set up, or the
    /// heartbeat thread could not start.
    Io(std::io::Error),
    /// A store answered with something that is not the protocol's reply.
    Reply {
        /// What was expected.
        message: String,
    },
}

impl Error {
    /// Whether trying again later may succeed: all ids leased, the store unreachable or
    /// failing, the lease lost or lapsed (a new lease is needed then).
    ///
    /// ```
    /// use snowdrift_lease::Error;
    /// assert!(!Error::Invalid { message: "ttl_ms 5 is outside 100..=31536000000".into() }.is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Error::AllLeased { .. }
                | Error::Lost { .. }
                | Error::Lapsed { .. }
                | Error::NotUsable { .. }
                | Error::Redis(_)
                | Error::Io(_)
        ) || self.is_postgres()
    }

    #[cfg(feature = "postgres")]
    fn is_postgres(&self) -> bool {
        matches!(self, Error::Postgres(_))
    }

    #[cfg(not(feature = "postgres"))]
    fn is_postgres(&self) -> bool {
        false
    }

    /// The error for a reply from one of the scripts: the code words `LEASED`, `CONFIG`
    /// and `LOST` become their variants, without the code word.
    pub(crate) fn from_script(err: redis::RedisError) -> Error {
        let message = || err.detail().unwrap_or_default().to_string();
        match err.code() {
            Some("LEASED") => Error::AllLeased { message: message() },
            Some("CONFIG") => Error::Config { message: message() },
            Some("LOST") => Error::Lost { message: message() },
            _ => Error::Redis(err),
        }
    }

    pub(crate) fn invalid(message: String) -> Error {
        Error::Invalid { message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::AllLeased { message }
            | Error::Config { message }
            | Error::Lost { message }
            | Error::Invalid { message }
            | Error::NotSetUp { message } => f.write_str(message),
            Error::Lapsed {
                node,
                space,
                ttl_ms,
                skew_ms,
            } => write!(
                f,
                "lease of node {node} of '{space}' lapsed: no renewal succeeded for {} ms \
                 (ttl {ttl_ms} ms, skew {skew_ms} ms)",
                ttl_ms.saturating_sub(*skew_ms)
            ),
            Error::NotUsable {
                node,
                space,
                waited_ms,
            } => write!(
                f,
                "lease of node {node} of '{space}' did not become usable within {waited_ms} ms"
            ),
            Error::Stopped { node, space } => {
                write!(f, "lease of node {node} of '{space}' was released")
            }
            Error::Generator(e) => write!(f, "generator: {e}"),
            Error::Redis(e) => write!(f, "redis: {e}"),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => match e.as_db_error() {
                Some(db) => {
                    write!(
                        f,
                        "postgres: {} (SQLSTATE {})",
                        db.message(),
                        db.code().code()
                    )?;
                    if let Some(detail) = db.detail() {
                        write!(f, "; {detail}")?;
                    }
                    match db.hint() {
                        Some(hint) => write!(f, "; hint: {hint}"),
                        None => Ok(()),
                    }
                }
                None => write!(f, "postgres: {e}"),
            },
            Error::Io(e) => write!(f, "{e}"),
            Error::Reply { message } => write!(f, "unexpected reply from the store: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Generator(e) => Some(e),
            Error::Redis(e) => Some(e),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<snowdrift::Error> for Error {
    fn from(e: snowdrift::Error) -> Self {
        Error::Generator(e)
    }
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        Error::Redis(e)
    }
}
