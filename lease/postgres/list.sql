-- snowdrift lease protocol on PostgreSQL: a space's leases, for operators (read-only).
-- $1 space (text). One row: now, capacity, ttl, skew, created, next (int8; NULL when the
-- space does not exist), nodes, untils (int8[]), holders (text[], '' for a released id).
SELECT now, capacity, ttl, skew, created, next, nodes, untils, holders FROM snowdrift_list($1)
