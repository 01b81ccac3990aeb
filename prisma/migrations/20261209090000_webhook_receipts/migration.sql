-- Every delivery of a provider event the shop verified, with what it did:
-- webhook_events holds one row per event id (the gate that makes it act
-- once); this log holds one per delivery, so a duplicate, a late copy or a
-- refusal for a payment not yet recorded is seen too. Written in the
-- delivery's own transaction (or, for a refusal, after its rollback).
CREATE TABLE "webhook_receipts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "event_id" VARCHAR(255) NOT NULL,
    "type" VARCHAR(100) NOT NULL,
    "provider_payment_id" VARCHAR(255),
    "outcome" VARCHAR(32) NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT clock_timestamp(),

    CONSTRAINT "webhook_receipts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_receipts_provider_payment_id_received_at_idx" ON "webhook_receipts"("provider_payment_id", "received_at");
