-- Whether a request waits for a key's attempt (Prefer: wait): only then does
-- the key's completion, release or lease handed back NOTIFY the instances'
-- listeners. PostgreSQL serialises the commits of notifying transactions
-- (one lock for the notification queue, held through the commit), which
-- cost a first-time checkout's throughput when every completion notified.
ALTER TABLE idempotency_keys ADD COLUMN awaited boolean NOT NULL DEFAULT false;
