-- 3-D Secure and the provider's webhooks.
--
-- A payment the provider cannot settle at once (the shopper must
-- authenticate with their bank) is recorded pending, with its order: the
-- order waits, and ends paid or failed when the provider's event, the
-- shopper's return or the recovery worker settles it. New enum values are
-- only added here, not used, so this runs in one transaction.
ALTER TYPE "order_status" ADD VALUE IF NOT EXISTS 'pending';
ALTER TYPE "order_status" ADD VALUE IF NOT EXISTS 'failed';
ALTER TYPE "payment_status" ADD VALUE IF NOT EXISTS 'pending';

-- Who settled a pending payment ('webhook', 'recovery'), and when; null for
-- a payment the provider's own answer settled.
ALTER TABLE "payments" ADD COLUMN "settled_by" VARCHAR(16);
ALTER TABLE "payments" ADD COLUMN "settled_at" TIMESTAMPTZ(3);
-- The recovery worker's question: which payments are still pending, oldest first.
CREATE INDEX "payments_status_created_at_idx" ON "payments"("status", "created_at");

-- Fulfilment's visible, countable effect: one shipment per paid order. The
-- unique order_id makes "shipped once" the database's rule too.
CREATE TABLE "shipments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "order_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "shipments_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "shipments_order_id_key" ON "shipments"("order_id");
ALTER TABLE "shipments" ADD CONSTRAINT "shipments_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every provider event acted on, by its id: written in the transaction of
-- the change it caused (or of nothing, when it changed nothing), so a
-- duplicate finds its id and changes nothing.
CREATE TABLE "webhook_events" (
    "event_id" VARCHAR(255) NOT NULL,
    "type" VARCHAR(100) NOT NULL,
    "provider" VARCHAR(32) NOT NULL,
    "provider_payment_id" VARCHAR(255),
    "outcome" VARCHAR(32) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("event_id")
);
CREATE INDEX "webhook_events_provider_payment_id_idx" ON "webhook_events"("provider_payment_id");
