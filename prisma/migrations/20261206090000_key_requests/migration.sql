-- Every request that presented a key to the checkout, as its answer left:
-- the first attempt, its replays, the 409s and 422s, the failures. The key
-- inspector shows them beside the recovery points (DESIGN.md, "The requests
-- that presented a key"). Written after the answer is known, never inside
-- the claim's statement, so the checkout neither waits for it nor fails with it.

-- How the request was answered.
CREATE TYPE "key_request_answer" AS ENUM ('completed', 'lost', 'replay', 'conflict', 'mismatch', 'failed', 'rejected');

-- How many requests presented the key: the counter that numbers them. Its
-- row lock (an upsert) is what makes two concurrent recordings of one key
-- take turns, without touching the key's own row, which the attempt that
-- holds the key is still writing.
CREATE TABLE "idempotency_key_request_counts" (
    "key_id" UUID NOT NULL,
    "seen" INTEGER NOT NULL,

    CONSTRAINT "idempotency_key_request_counts_pkey" PRIMARY KEY ("key_id")
);

-- The requests themselves, bounded per key: the first ones and the latest
-- ones are kept, those in between deleted as newer ones arrive (the counter
-- says how many there were).
CREATE TABLE "idempotency_key_requests" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "key_id" UUID NOT NULL,
    "nth" INTEGER NOT NULL,
    "request_id" VARCHAR(128) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "answered_at" TIMESTAMPTZ(3) NOT NULL,
    "status" INTEGER NOT NULL,
    "answer" "key_request_answer" NOT NULL,

    CONSTRAINT "idempotency_key_requests_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "idempotency_key_requests_key_id_nth_key" ON "idempotency_key_requests"("key_id", "nth");

-- Deleted with their key, by whatever deletes it: the reaper at the TTL, a
-- claim that starts an expired key afresh, a release.
ALTER TABLE "idempotency_key_request_counts" ADD CONSTRAINT "idempotency_key_request_counts_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "idempotency_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "idempotency_key_requests" ADD CONSTRAINT "idempotency_key_requests_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "idempotency_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
