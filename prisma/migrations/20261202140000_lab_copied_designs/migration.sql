-- The designs people copy instead of OncePay's, run for real in the strategy
-- lab: a separate key store on DynamoDB (the classic conditional put), the
-- same on Redis (SET NX), and AWS Lambda Powertools' idempotency utility.
-- (New enum values cannot be used in the transaction that adds them; this
-- migration only adds them.)
ALTER TYPE "lab_strategy" ADD VALUE 'dynamodb_key_store' BEFORE 'atomic_claim';
ALTER TYPE "lab_strategy" ADD VALUE 'redis_key_store' BEFORE 'atomic_claim';
ALTER TYPE "lab_strategy" ADD VALUE 'powertools' BEFORE 'atomic_claim';
ALTER TYPE "order_source" ADD VALUE 'lab_dynamodb_key_store';
ALTER TYPE "order_source" ADD VALUE 'lab_redis_key_store';
ALTER TYPE "order_source" ADD VALUE 'lab_powertools';

-- A lab run is a storm (N identical requests at once) or a crash scenario
-- (one request that crashes after its charge, then its retries).
CREATE TYPE "lab_run_kind" AS ENUM ('storm', 'crash');
ALTER TABLE "lab_storms" ADD COLUMN "kind" "lab_run_kind" NOT NULL DEFAULT 'storm';
