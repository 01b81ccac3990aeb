-- The lab's webhook storms: one pending order, then a storm of duplicated
-- and reordered deliveries of its events at one of two handlers, OncePay's
-- (an event record) or one without, counting what each shipped.
--
-- The storm's order is the lab's own (source lab_webhooks) and so is its
-- payment's provider ('lab'): the shop's endpoint, its recovery worker and
-- the provider's records never meet it. The new enum value is only added
-- here, not used, so this runs in one transaction.
ALTER TYPE "order_source" ADD VALUE IF NOT EXISTS 'lab_webhooks';

CREATE TYPE "lab_webhook_design" AS ENUM ('event_record', 'no_event_record');

CREATE TABLE "lab_webhook_storms" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "design" "lab_webhook_design" NOT NULL,
    "size" INTEGER NOT NULL,
    "order_id" UUID NOT NULL,
    "payment_intent" VARCHAR(255) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lab_webhook_storms_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "lab_webhook_storms_account_id_created_at_idx" ON "lab_webhook_storms"("account_id", "created_at");
CREATE UNIQUE INDEX "lab_webhook_storms_order_id_key" ON "lab_webhook_storms"("order_id");
ALTER TABLE "lab_webhook_storms" ADD CONSTRAINT "lab_webhook_storms_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "lab_webhook_storms" ADD CONSTRAINT "lab_webhook_storms_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What the handler without an event record ships: like shipments, without
-- the unique order_id, since that handler has nothing to stop a second.
CREATE TABLE "lab_shipments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "order_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lab_shipments_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "lab_shipments_order_id_idx" ON "lab_shipments"("order_id");
ALTER TABLE "lab_shipments" ADD CONSTRAINT "lab_shipments_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;
