-- snowdrift lease protocol on PostgreSQL: the first statement of a call sent as a
-- transaction of its own (connect.sql for the transaction, then the call, in one query of
-- the simple protocol): the calls are written for READ COMMITTED and write, whatever the
-- database's defaults (default_transaction_isolation, default_transaction_read_only).
SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
