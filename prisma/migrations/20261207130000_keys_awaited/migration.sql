-- Whether a request waits for a key's attempt (Prefer: wait): only then does
-- the key's completion, release or lease handed back NOTIFY the instances'
-- listeners. PostgreSQL serialises the commits of notifying transactions
-- (one lock for the notification queue, held through the commit), so every
-- completion notifying would serialise the checkouts' durable commits.
ALTER TABLE idempotency_keys ADD COLUMN awaited boolean NOT NULL DEFAULT false;
