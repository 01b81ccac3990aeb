-- The provider key names the request, not its key row, so that it outlives
-- a lost row (DESIGN.md, "A provider key that outlives its row").

-- Which of the request's provider keys the key row charges under: 0 first,
-- one more each time the provider proves a key can never charge (a stored
-- 500 replayed, and a search that finds nothing).
ALTER TABLE "idempotency_keys" ADD COLUMN "provider_key_generation" INTEGER NOT NULL DEFAULT 0;

-- One provider payment is recorded at most once: a key reused after its TTL
-- for the same cart gets the provider's replay of a payment an earlier key
-- row recorded, and this index refuses to record it twice.
CREATE UNIQUE INDEX "payments_provider_provider_payment_id_key" ON "payments"("provider", "provider_payment_id");
