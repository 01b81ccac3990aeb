-- The records of the requests under a key stop referring to the key with
-- foreign keys. A foreign key's check locks the row it points at (FOR KEY
-- SHARE), and a lock is a write to that row, logged like one: every record
-- wrote to its key's row twice over, the counter's check and the record's.
-- Measured with `npm run bench:cpu`, that was 0.23 of the 0.94 ms of
-- PostgreSQL's CPU that a first-time checkout cost more than a keyless one.
--
-- What the foreign keys did that is still needed: a key's records go with
-- the key, whatever deletes it (the reaper, a release, a claim that starts
-- an expired key afresh). The trigger below does that, as ON DELETE CASCADE
-- did through a trigger of its own. What they did that is given up: a
-- record written while its key is being reaped (a replay at the very end of
-- its TTL, the key deleted between the record's lookup and its insert) now
-- stays, naming a key that no longer exists; nothing shows it, and the
-- foreign key made the whole batch fail instead.
ALTER TABLE "idempotency_key_request_counts" DROP CONSTRAINT "idempotency_key_request_counts_key_id_fkey";
ALTER TABLE "idempotency_key_requests" DROP CONSTRAINT "idempotency_key_requests_key_id_fkey";

-- A record is named by its key and its number; the random id was a second
-- index to write for nothing.
ALTER TABLE "idempotency_key_requests" DROP CONSTRAINT "idempotency_key_requests_pkey";
ALTER TABLE "idempotency_key_requests" DROP COLUMN "id";
DROP INDEX "idempotency_key_requests_key_id_nth_key";
ALTER TABLE "idempotency_key_requests" ADD CONSTRAINT "idempotency_key_requests_pkey" PRIMARY KEY ("key_id", "nth");

CREATE FUNCTION "delete_key_requests"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "idempotency_key_requests" WHERE "key_id" = OLD."id";
  DELETE FROM "idempotency_key_request_counts" WHERE "key_id" = OLD."id";
  RETURN NULL;
END
$$;

CREATE TRIGGER "idempotency_keys_delete_requests" AFTER DELETE ON "idempotency_keys"
  FOR EACH ROW EXECUTE FUNCTION "delete_key_requests"();
