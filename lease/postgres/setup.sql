-- snowdrift lease protocol on PostgreSQL: the tables and functions of the leases.
--
-- Run after connect.sql (which names the schema), as one script (a simple-protocol batch:
-- `psql -f`, `batch_execute`, `client.query(text)` without parameters). Idempotent: it
-- creates what is missing and replaces the functions, so running it again after an
-- upgrade is the migration. Needs CREATE on the database (or an existing schema the
-- role may create in); no superuser. Concurrent runs wait for each other.
--
-- Every time is the database's clock (clock_timestamp(), which moves within a
-- transaction; now() does not), in Unix ms. The functions are STRICT: a call with a NULL
-- argument does not run (no row), which a client uses to refuse a call inside a
-- transaction it did not begin.
BEGIN;
DO $$
BEGIN
  PERFORM pg_advisory_xact_lock(7346029811482001); -- until COMMIT
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', current_setting('snowdrift.schema'));
END
$$;

-- One row per space: its settings (one space, one setting), the lowest id never leased,
-- and the server whose records these are (see snowdrift_observe).
CREATE TABLE IF NOT EXISTS snowdrift_spaces (
  name text PRIMARY KEY,
  capacity bigint NOT NULL,
  ttl bigint NOT NULL,
  skew bigint NOT NULL,
  layout text NOT NULL,
  created bigint NOT NULL,
  next bigint NOT NULL,
  server timestamptz NOT NULL,
  since bigint NOT NULL
);

-- One row per id ever leased: its fence (the end of its newest lease), the token of the
-- lease holding it (NULL once released) and the holder's description.
CREATE TABLE IF NOT EXISTS snowdrift_leases (
  space text NOT NULL REFERENCES snowdrift_spaces (name) ON DELETE CASCADE,
  node bigint NOT NULL,
  fence bigint NOT NULL,
  token text,
  holder text,
  PRIMARY KEY (space, node)
);
CREATE INDEX IF NOT EXISTS snowdrift_leases_by_fence ON snowdrift_leases (space, fence, node);

-- The database's clock, Unix ms.
CREATE OR REPLACE FUNCTION snowdrift_now() RETURNS bigint
LANGUAGE sql VOLATILE
AS $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;

-- One row per space while the server has run without a crash since the row was written:
-- UNLOGGED, so crash recovery empties it (after an immediate stop, and after a single
-- backend's crash, which resets the whole server without restarting it), and it is
-- empty on a promoted standby and in a restored base backup.
CREATE UNLOGGED TABLE IF NOT EXISTS snowdrift_alive (space text PRIMARY KEY);

-- The guard against lost commits. A space's records belong to the server process that
-- wrote them (`server`: pg_postmaster_start_time(), new at every start, and different on a
-- promoted standby) and to its run without a crash (the space's row of snowdrift_alive).
-- When another process serves them (a restart, possibly from an older backup; a failover
-- to a standby that had not caught up) or the server went through crash recovery,
-- commits may have been lost: `since` becomes now, and every lease granted in the next
-- ttl + skew ms is fenced after since + ttl + skew, beyond any fence the lost commits
-- could hold. Returns `since` when it moved, else NULL.
--
-- It also makes the calling transaction's commit wait for its WAL to reach disk when the
-- session has synchronous_commit = off (a stronger setting is kept): an acknowledged
-- grant, renewal or release survives a crash.
CREATE OR REPLACE FUNCTION snowdrift_observe(p_space text, p_now bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT SET search_path FROM CURRENT
AS $$
DECLARE
  v_since bigint;
BEGIN
  IF current_setting('synchronous_commit') = 'off' THEN
    -- Until the end of the transaction (the function's SET clause restores only search_path).
    PERFORM set_config('synchronous_commit', 'local', true);
  END IF;
  PERFORM FROM snowdrift_alive a WHERE a.space = p_space;
  IF NOT FOUND THEN
    -- The space's row first, as acquire locks it: rows are locked in one order.
    UPDATE snowdrift_spaces s SET server = pg_postmaster_start_time(), since = greatest(s.since, p_now)
      WHERE s.name = p_space
      RETURNING s.since INTO v_since;
    INSERT INTO snowdrift_alive AS a VALUES (p_space) ON CONFLICT DO NOTHING;
  ELSE
    UPDATE snowdrift_spaces s SET server = pg_postmaster_start_time(), since = greatest(s.since, p_now)
      WHERE s.name = p_space AND s.server <> pg_postmaster_start_time()
      RETURNING s.since INTO v_since;
  END IF;
  RETURN v_since;
END
$$;

-- Acquire: the lowest id never leased, else the id whose fence is oldest, if it has passed.
-- Acquires of one space queue on the space's row (SELECT ... FOR UPDATE): the choice looks
-- at every id of the space, so it is made by one transaction at a time; renewals and
-- releases lock only their id's row. Errors: LEASED, CONFIG (messages start with them).
CREATE OR REPLACE FUNCTION snowdrift_acquire(
  p_space text, p_capacity bigint, p_ttl bigint, p_skew bigint, p_token text, p_holder text,
  p_layout text
) RETURNS TABLE (node bigint, not_before bigint, until bigint, now bigint)
LANGUAGE plpgsql VOLATILE STRICT SET search_path FROM CURRENT
AS $$
DECLARE
  v_now bigint := snowdrift_now();
  s snowdrift_spaces%ROWTYPE;
  v_node bigint;
  v_fence bigint;
  v_nb bigint;
  v_since bigint;
BEGIN
  INSERT INTO snowdrift_spaces AS t
    VALUES (p_space, p_capacity, p_ttl, p_skew, p_layout, v_now, 0, pg_postmaster_start_time(), v_now)
    ON CONFLICT (name) DO NOTHING;
  SELECT * INTO STRICT s FROM snowdrift_spaces t WHERE t.name = p_space FOR UPDATE;
  v_now := snowdrift_now();
  IF s.capacity <> p_capacity OR s.ttl <> p_ttl OR s.skew <> p_skew OR s.layout <> p_layout THEN
    RAISE EXCEPTION 'CONFIG space ''%'' leases % node ids of layout "%" for % ms (skew % ms); this client asked for % node ids of layout "%" for % ms (skew % ms)',
      p_space, s.capacity, s.layout, s.ttl, s.skew, p_capacity, p_layout, p_ttl, p_skew;
  END IF;
  v_since := coalesce(snowdrift_observe(p_space, v_now), s.since);

  IF s.next < p_capacity THEN
    -- The lowest id never leased in this space.
    v_node := s.next;
    v_nb := 0;
    UPDATE snowdrift_spaces t SET next = s.next + 1 WHERE t.name = p_space;
    INSERT INTO snowdrift_leases AS l (space, node, fence, token, holder)
      VALUES (p_space, v_node, v_now + p_ttl, p_token, p_holder);
  ELSE
    -- The id whose lease ended longest ago, if one has ended. Its row is locked; a
    -- renewal that moved its fence meanwhile is seen (READ COMMITTED reads the newest
    -- version of a locked row).
    SELECT l.node, l.fence INTO v_node, v_fence FROM snowdrift_leases l
      WHERE l.space = p_space ORDER BY l.fence, l.node LIMIT 1 FOR UPDATE;
    IF NOT FOUND OR v_fence > v_now THEN
      RAISE EXCEPTION 'LEASED all % node ids of ''%'' are leased', p_capacity, p_space;
    END IF;
    v_nb := v_fence - 1;
    UPDATE snowdrift_leases l SET fence = v_now + p_ttl, token = p_token, holder = p_holder
      WHERE l.space = p_space AND l.node = v_node;
  END IF;

  -- Never below the database's clock, and after the guard window of a new server.
  v_nb := greatest(v_nb, v_now);
  IF v_now < v_since + p_ttl + p_skew AND v_nb < v_since + p_ttl + p_skew THEN
    v_nb := v_since + p_ttl + p_skew;
  END IF;
  RETURN QUERY SELECT v_node, v_nb, v_now + p_ttl, v_now;
END
$$;

-- Renew: the fence only moves forward, and the lease's token becomes p_next (when given):
-- a renewal that finds p_next already there is the same holder's, sent again after its
-- reply was lost; a copy of the holder renewing second, with the old token and another
-- p_next, finds neither. Error LOST when the id is no longer this lease's.
DROP FUNCTION IF EXISTS snowdrift_renew(text, bigint, text, bigint);
CREATE OR REPLACE FUNCTION snowdrift_renew(p_space text, p_node bigint, p_token text, p_ttl bigint,
  p_next text DEFAULT '')
RETURNS TABLE (until bigint, now bigint)
LANGUAGE plpgsql VOLATILE STRICT SET search_path FROM CURRENT
AS $$
DECLARE
  v_now bigint := snowdrift_now();
  v_fence bigint;
BEGIN
  PERFORM snowdrift_observe(p_space, v_now);
  UPDATE snowdrift_leases l SET fence = greatest(l.fence, v_now + p_ttl),
      token = coalesce(nullif(p_next, ''), l.token)
    WHERE l.space = p_space AND l.node = p_node AND l.token IN (p_token, nullif(p_next, ''))
    RETURNING l.fence INTO v_fence;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'LOST node id % of ''%'' is no longer held by this lease (taken over after it ended, renewed by a copy of this holder, or the database lost it)',
      p_node, p_space;
  END IF;
  RETURN QUERY SELECT v_fence, v_now;
END
$$;

-- Release: the id's fence comes down to just after `issued` (never up). 1 when released,
-- 0 when the id was no longer this lease's. p_next: the token a renewal without a reply
-- may have put in place of p_token.
DROP FUNCTION IF EXISTS snowdrift_release(text, bigint, text, bigint);
CREATE OR REPLACE FUNCTION snowdrift_release(p_space text, p_node bigint, p_token text, p_issued bigint,
  p_next text DEFAULT '')
RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT SET search_path FROM CURRENT
AS $$
BEGIN
  PERFORM snowdrift_observe(p_space, snowdrift_now());
  UPDATE snowdrift_leases l SET fence = least(l.fence, p_issued + 1), token = NULL, holder = NULL
    WHERE l.space = p_space AND l.node = p_node AND l.token IN (p_token, nullif(p_next, ''));
  RETURN CASE WHEN FOUND THEN 1 ELSE 0 END;
END
$$;

-- List: the space's settings and every id ever leased (read-only).
CREATE OR REPLACE FUNCTION snowdrift_list(p_space text)
RETURNS TABLE (now bigint, capacity bigint, ttl bigint, skew bigint, created bigint, next bigint,
  nodes bigint[], untils bigint[], holders text[])
LANGUAGE sql VOLATILE STRICT SET search_path FROM CURRENT
AS $$
  SELECT snowdrift_now(), s.capacity, s.ttl, s.skew, s.created, s.next,
    coalesce((SELECT array_agg(l.node ORDER BY l.fence, l.node) FROM snowdrift_leases l WHERE l.space = p_space), '{}'),
    coalesce((SELECT array_agg(l.fence ORDER BY l.fence, l.node) FROM snowdrift_leases l WHERE l.space = p_space), '{}'),
    coalesce((SELECT array_agg(coalesce(l.holder, '') ORDER BY l.fence, l.node) FROM snowdrift_leases l WHERE l.space = p_space), '{}')
  FROM (SELECT 1) AS one LEFT JOIN snowdrift_spaces s ON s.name = p_space
$$;
COMMIT;
