-- The ledger, the key inspector and the strategy lab.

-- When the key reached `charged`, by the database's clock. It is set by the
-- UPDATE that moves the key there, so the timeline of recovery points costs
-- no statement of its own: claimed is created_at, payment_started is
-- payment_started_at, finished is completed_at.
ALTER TABLE "idempotency_keys" ADD COLUMN "charged_at" TIMESTAMPTZ(3);

-- Which code path wrote an order: the real checkout, or one of the lab's
-- strategies that are broken on purpose. The ledger marks the latter.
CREATE TYPE "order_source" AS ENUM ('checkout', 'lab_no_key', 'lab_check_then_insert', 'lab_claim_after_charge');
ALTER TABLE "orders" ADD COLUMN "source" "order_source" NOT NULL DEFAULT 'checkout';

-- The Idempotency-Key the order was made under, copied in the same INSERT:
-- the key row is reaped after its TTL, the order keeps saying what key it had.
ALTER TABLE "orders" ADD COLUMN "idem_key" VARCHAR(255);
UPDATE "orders" o SET "idem_key" = k."idem_key" FROM "idempotency_keys" k WHERE k."id" = o."idempotency_key_id";

-- The idempotency key the payment provider saw (`oncepay:<account>:<key row>`
-- for the checkout): the handle to find the charge there again, kept after
-- the key row is reaped.
ALTER TABLE "payments" ADD COLUMN "provider_key" VARCHAR(255);
UPDATE "payments" SET "provider_key" = 'oncepay:' || "account_id" || ':' || "idempotency_key_id" WHERE "idempotency_key_id" IS NOT NULL;

-- The ledger pages newest first by (created_at, id).
DROP INDEX "orders_account_id_created_at_idx";
CREATE INDEX "orders_account_id_created_at_id_idx" ON "orders"("account_id", "created_at" DESC, "id" DESC);

-- One storm in the lab: N identical requests of one intent (one cart, one
-- key unless the strategy sends none), fired at one strategy at once.
CREATE TYPE "lab_strategy" AS ENUM ('no_key', 'check_then_insert', 'claim_after_charge', 'atomic_claim');
CREATE TABLE "lab_storms" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "strategy" "lab_strategy" NOT NULL,
    "size" INTEGER NOT NULL CHECK ("size" BETWEEN 1 AND 1000),
    "idem_key" VARCHAR(255),
    "cart_id" VARCHAR(100) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lab_storms_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "lab_storms_account_id_cart_id_key" ON "lab_storms"("account_id", "cart_id");
CREATE INDEX "lab_storms_account_id_created_at_idx" ON "lab_storms"("account_id", "created_at");
ALTER TABLE "lab_storms" ADD CONSTRAINT "lab_storms_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- BROKEN ON PURPOSE: the check-then-insert strategy's key table. It has an
-- index to look keys up by, but NO unique constraint, as in the code this
-- strategy copies: two requests that both find no row both insert one.
CREATE TABLE "lab_check_then_insert_keys" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "idem_key" VARCHAR(255) NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_body" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lab_check_then_insert_keys_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "lab_check_then_insert_keys_account_id_idem_key_idx" ON "lab_check_then_insert_keys"("account_id", "idem_key");
ALTER TABLE "lab_check_then_insert_keys" ADD CONSTRAINT "lab_check_then_insert_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- BROKEN ON PURPOSE: the claim-after-charge strategy's key table. Its unique
-- constraint is right; what is wrong is that the strategy claims the key
-- only after it has charged.
CREATE TABLE "lab_claim_after_charge_keys" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "idem_key" VARCHAR(255) NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_body" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lab_claim_after_charge_keys_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "lab_claim_after_charge_keys_account_id_idem_key_key" ON "lab_claim_after_charge_keys"("account_id", "idem_key");
ALTER TABLE "lab_claim_after_charge_keys" ADD CONSTRAINT "lab_claim_after_charge_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
