//! How a lease gets its connections: a single Redis server or a Redis Cluster.

use std::time::Duration;

/// Something that opens connections to Redis: [`redis::Client`], and
/// [`redis::cluster::ClusterClient`] with the `cluster` feature.
///
/// A lease opens one connection to acquire and hands it to its heartbeat thread, which
/// reconnects through a clone of the connector after a failure.
pub trait Connector: Clone + Send + 'static {
    /// The blocking connection.
    type Connection: redis::ConnectionLike + Send + 'static;

    /// Opens a connection, failing after about `timeout`.
    fn connect(&self, timeout: Duration) -> redis::RedisResult<Self::Connection>;

    /// Bounds every later read and write on `connection` by `timeout`, so a heartbeat
    /// stuck on a silent server still lapses on time.
    fn set_timeout(connection: &mut Self::Connection, timeout: Duration) -> redis::RedisResult<()>;
}

impl Connector for redis::Client {
    type Connection = redis::Connection;

    fn connect(&self, timeout: Duration) -> redis::RedisResult<redis::Connection> {
        let mut con = self.get_connection_with_timeout(timeout)?;
        Self::set_timeout(&mut con, timeout)?;
        Ok(con)
    }

    fn set_timeout(
        connection: &mut redis::Connection,
        timeout: Duration,
    ) -> redis::RedisResult<()> {
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))
    }
}

#[cfg(feature = "cluster")]
impl Connector for redis::cluster::ClusterClient {
    type Connection = redis::cluster::ClusterConnection;

    /// Connects with the client's own connection timeout and retry settings; `timeout`
    /// bounds reads and writes afterwards.
    fn connect(&self, timeout: Duration) -> redis::RedisResult<Self::Connection> {
        let mut con = self.get_connection()?;
        Self::set_timeout(&mut con, timeout)?;
        Ok(con)
    }

    fn set_timeout(connection: &mut Self::Connection, timeout: Duration) -> redis::RedisResult<()> {
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))
    }
}

/// Something that opens async connections to Redis (feature `tokio`):
/// [`redis::Client`], and [`redis::cluster::ClusterClient`] with `cluster` too. Every call
/// on them is bounded with `tokio::time::timeout` by the lease.
#[cfg(feature = "tokio")]
pub trait AsyncConnector: Clone + Send + Sync + 'static {
    /// The async connection.
    type Connection: redis::aio::ConnectionLike + Send + 'static;

    /// Opens a connection.
    fn connect_async(
        &self,
    ) -> impl std::future::Future<Output = redis::RedisResult<Self::Connection>> + Send;
}

#[cfg(feature = "tokio")]
impl AsyncConnector for redis::Client {
    type Connection = redis::aio::MultiplexedConnection;

    fn connect_async(
        &self,
    ) -> impl std::future::Future<Output = redis::RedisResult<Self::Connection>> + Send {
        self.get_multiplexed_async_connection()
    }
}

#[cfg(all(feature = "tokio", feature = "cluster"))]
impl AsyncConnector for redis::cluster::ClusterClient {
    type Connection = redis::cluster_async::ClusterConnection;

    fn connect_async(
        &self,
    ) -> impl std::future::Future<Output = redis::RedisResult<Self::Connection>> + Send {
        self.get_async_connection()
    }
}
