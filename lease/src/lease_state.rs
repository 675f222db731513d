//! Where a lease is in its life.

/// Where a lease is in its life. Every state but `Live` is final, and in every one of
/// them the generator is fenced at 0 (it issues nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Renewed in time; the generator issues IDs before [`Lease::until_ms`](crate::Lease::until_ms).
    Live,
    /// No renewal succeeded for `ttl - skew` ms.
    Lapsed,
    /// The store answered that the id is no longer this lease's.
    Lost,
    /// Released by its holder.
    Released,
    /// Stopped with [`Lease::abandon`](crate::Lease::abandon), without telling the store.
    Abandoned,
}
