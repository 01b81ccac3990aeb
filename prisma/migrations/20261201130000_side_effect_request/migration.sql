-- What the side effect was asked to do (the priced charge), kept from the
-- moment it starts. Whoever resumes the request repeats exactly that call, so
-- the provider recognises it under the same provider key, and the order is
-- written with the amounts that were charged, whatever the catalog says now.
ALTER TABLE "idempotency_keys" ADD COLUMN "side_effect_request" JSONB;
