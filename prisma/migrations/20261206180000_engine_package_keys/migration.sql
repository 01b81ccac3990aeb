-- The checkout's keys move onto the engine package's table, the shape of
-- packages/idempotency/migrations/001_idempotency_keys.sql: a key belongs to
-- a scope (here the account's id) and names the operation that runs under
-- it; the checkout's own columns become the operation's progress. Every key
-- keeps its row, its fingerprint and its place: a key in flight is resumed
-- by the new code at the point it reached.

-- Scope: the account's id as text. The foreign key goes (the engine knows
-- no accounts); an account's keys are never deleted before the account's
-- orders, which keep theirs.
ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_account_id_fkey";
ALTER TABLE "idempotency_keys" RENAME COLUMN "account_id" TO "scope";
ALTER TABLE "idempotency_keys" ALTER COLUMN "scope" TYPE TEXT USING "scope"::text;
ALTER INDEX "idempotency_keys_account_id_idem_key_key" RENAME TO "idempotency_keys_scope_idem_key_key";

-- Which operation runs under the key: every key so far is a checkout.
ALTER TABLE "idempotency_keys" ADD COLUMN "operation" VARCHAR(100) NOT NULL DEFAULT 'checkout';
ALTER TABLE "idempotency_keys" ALTER COLUMN "operation" DROP DEFAULT;

ALTER TABLE "idempotency_keys" RENAME COLUMN "request_body" TO "request";

-- What the phases kept: the cart being charged, then the provider's answer.
ALTER TABLE "idempotency_keys" ADD COLUMN "progress" JSONB NOT NULL DEFAULT '{}';
UPDATE "idempotency_keys"
   SET "progress" = jsonb_strip_nulls(jsonb_build_object('cart', "payment_request", 'charge', "charge_result"));

-- When the key reached its point; NULL while it never moved past the claim.
ALTER TABLE "idempotency_keys" ADD COLUMN "point_reached_at" TIMESTAMPTZ(3);
UPDATE "idempotency_keys"
   SET "point_reached_at" = coalesce("charged_at", "payment_started_at", "completed_at", "created_at")
 WHERE "recovery_point" <> 'claimed';

-- When it reached each point it moved to, for the key page.
ALTER TABLE "idempotency_keys" ADD COLUMN "points_reached" JSONB NOT NULL DEFAULT '{}';
UPDATE "idempotency_keys"
   SET "points_reached" = jsonb_strip_nulls(jsonb_build_object('payment_started', "payment_started_at", 'charged', "charged_at"));

-- A key in flight at charged goes back to payment_started, without the
-- provider's answer (the new code keeps the provider key beside it): its
-- resume asks the provider again under the same provider key, made from
-- the request and the generation the row keeps, and gets the same charge
-- back, the path a lost charged record takes.
UPDATE "idempotency_keys"
   SET "recovery_point" = 'payment_started', "progress" = "progress" - 'charge',
       "point_reached_at" = coalesce("payment_started_at", "point_reached_at")
 WHERE "state" = 'in_flight' AND "recovery_point" = 'charged';

ALTER TABLE "idempotency_keys" RENAME COLUMN "provider_key_generation" TO "side_effect_generation";

-- Recovery points are each operation's own names, and states plain text.
ALTER TABLE "idempotency_keys" ALTER COLUMN "recovery_point" DROP DEFAULT;
ALTER TABLE "idempotency_keys" ALTER COLUMN "recovery_point" TYPE VARCHAR(100) USING "recovery_point"::text;
ALTER TABLE "idempotency_keys" ALTER COLUMN "state" DROP DEFAULT;
ALTER TABLE "idempotency_keys" ALTER COLUMN "state" TYPE TEXT USING "state"::text;
ALTER TABLE "idempotency_keys" ALTER COLUMN "state" SET DEFAULT 'in_flight';
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_state_check" CHECK ("state" IN ('in_flight', 'complete'));
DROP TYPE "recovery_point";
DROP TYPE "key_state";

-- Kept in the fingerprint (method and path) or in the progress now.
ALTER TABLE "idempotency_keys"
  DROP COLUMN "request_method",
  DROP COLUMN "request_path",
  DROP COLUMN "payment_request",
  DROP COLUMN "charge_result",
  DROP COLUMN "payment_started_at",
  DROP COLUMN "charged_at";
