-- snowdrift lease protocol on PostgreSQL: release a lease on shutdown.
-- $1 space (text), $2 node (int8), $3 token (text), $4 issued (int8, Unix ms), $5 next token
-- (text: the one a renewal without a reply may have put in place of $3, else '').
-- One row: released (int4, 1 or 0).
SELECT snowdrift_release($1, $2, $3, $4, $5) AS released
