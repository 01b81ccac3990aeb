-- One word per idea: the key's columns are named for the payment steps they
-- record (recovery points payment_started and charged), as the code and
-- DESIGN.md name them. A rename keeps every row.
ALTER TABLE "idempotency_keys" RENAME COLUMN "side_effect_request" TO "payment_request";
ALTER TABLE "idempotency_keys" RENAME COLUMN "side_effect_result" TO "charge_result";
