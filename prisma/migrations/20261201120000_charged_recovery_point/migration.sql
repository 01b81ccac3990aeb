-- A third recovery point between "payment_started" and "finished": the
-- provider answered and its result is kept with the key, so whoever resumes
-- the request after a crash writes the order from it without asking the
-- provider again.
ALTER TYPE "recovery_point" ADD VALUE 'charged' BEFORE 'finished';

ALTER TABLE "idempotency_keys" ADD COLUMN "side_effect_result" JSONB;
