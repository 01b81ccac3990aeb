-- When the key's payment was first asked for (recovery point
-- payment_started), by the database's clock. A provider lookup that finds no
-- charge proves nothing until the provider's search has caught up with that
-- moment (lib/payments/stripe-provider.ts), so the lookup needs to know it.
ALTER TABLE "idempotency_keys" ADD COLUMN "payment_started_at" TIMESTAMPTZ(3);
