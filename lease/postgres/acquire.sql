-- snowdrift lease protocol on PostgreSQL: acquire a node id of a space.
-- $1 space (text), $2 capacity (int8), $3 ttl ms (int8), $4 skew ms (int8), $5 token
-- (text), $6 holder (text), $7 layout (text). One row: node, not_before, until, now (int8).
SELECT node, not_before, until, now FROM snowdrift_acquire($1, $2, $3, $4, $5, $6, $7)
