-- Refunds: the shop's second operation under an Idempotency-Key.
--
-- A payment keeps how much of it is spoken for by refunds (pending or
-- succeeded). A refund reserves its amount here before the provider hears
-- of it, with a row lock on the payment, so refunds of one order in flight
-- at once under different keys can never add up to more than was charged;
-- the CHECK is the last word if code ever tried.
ALTER TABLE "payments" ADD COLUMN "refunded_amount" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "payments" ADD CONSTRAINT "payments_refunded_amount_check"
  CHECK ("refunded_amount" >= 0 AND "refunded_amount" <= "amount");

-- pending: reserved, asked of the provider (or about to be); succeeded: the
-- provider refunded it; refused: the provider refused it, and its amount
-- went back to the payment.
CREATE TYPE "refund_status" AS ENUM ('pending', 'succeeded', 'refused');

CREATE TABLE "refunds" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "idempotency_key_id" UUID,
    "idem_key" VARCHAR(255) NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "status" "refund_status" NOT NULL DEFAULT 'pending',
    "provider" VARCHAR(32) NOT NULL,
    "provider_key" VARCHAR(255) NOT NULL,
    "provider_refund_id" VARCHAR(255),
    "refusal_code" VARCHAR(100),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refunds_amount_check" CHECK ("amount" > 0)
);

CREATE UNIQUE INDEX "refunds_idempotency_key_id_key" ON "refunds"("idempotency_key_id");
-- One provider refund is recorded at most once (a key reused after its time
-- to live can be answered with an old refund, as a charge can).
CREATE UNIQUE INDEX "refunds_provider_provider_refund_id_key" ON "refunds"("provider", "provider_refund_id");
CREATE INDEX "refunds_order_id_created_at_idx" ON "refunds"("order_id", "created_at");
CREATE INDEX "refunds_account_id_idx" ON "refunds"("account_id");
CREATE INDEX "refunds_payment_id_idx" ON "refunds"("payment_id");

ALTER TABLE "refunds" ADD CONSTRAINT "refunds_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_idempotency_key_id_fkey" FOREIGN KEY ("idempotency_key_id") REFERENCES "idempotency_keys"("id") ON DELETE SET NULL ON UPDATE CASCADE;
