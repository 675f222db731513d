-- snowdrift lease protocol on PostgreSQL: names the schema that holds the space tables.
-- $1 (text): the schema. $2 (bool): false to set it for the session (a connection of
-- the client's own, once, before setup.sql and the calls), true for the current
-- transaction only (a connection shared with other code: one query of transaction.sql,
-- this and one call). Every later statement names the tables and functions without a
-- schema. For the session, its transactions also run as the calls need whatever the
-- database's defaults: READ COMMITTED, read-write.
SELECT set_config('search_path', quote_ident($1), $2), set_config('snowdrift.schema', $1, $2),
  set_config('default_transaction_isolation', 'read committed', $2),
  set_config('default_transaction_read_only', 'off', $2)
