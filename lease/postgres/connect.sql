-- snowdrift lease protocol on PostgreSQL: run once on every new connection, before
-- setup.sql and the calls. $1 (text): the schema that holds the space tables.
-- Every later statement names the tables and functions without a schema.
SELECT set_config('search_path', quote_ident($1), false), set_config('snowdrift.schema', $1, false)
