-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN "request_body" JSONB;
