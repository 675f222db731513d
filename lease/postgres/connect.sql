-- snowdrift lease protocol on PostgreSQL: names the schema that holds the space tables.
-- $1 (text): the schema. $2 (bool): false to set it for the session (a connection of
-- the client's own, once, before setup.sql and the calls), true for the current
-- transaction only (a connection shared with other code: BEGIN, this, one call, COMMIT).
-- Every later statement names the tables and functions without a schema.
SELECT set_config('search_path', quote_ident($1), $2), set_config('snowdrift.schema', $1, $2)
