-- snowdrift lease protocol on PostgreSQL: renew a lease (the heartbeat).
-- $1 space (text), $2 node (int8), $3 token (text), $4 ttl ms (int8), $5 next token (text:
-- the lease's token from this renewal on; see snowdrift_renew in setup.sql).
-- One row: until, now (int8).
SELECT until, now FROM snowdrift_renew($1, $2, $3, $4, $5)
