import type pg from "pg";

/**
 * The simulator's own tables, in their own schema so they can share a
 * database with OncePay without touching its migrations: the simulator is a
 * separate service that happens to be convenient to run next to the shop.
 *
 *   payment_intents   one row per PaymentIntent, as GET /v1/payment_intents/:id shows it
 *   charges           one row per attempt to move money, succeeded or failed,
 *                     with how much of it has been refunded
 *   refunds           one row per refund, against a succeeded charge (refund-ledger.ts)
 *   idempotency_keys  one row per (account, Idempotency-Key): the claim, then the stored response
 *   api_keys          one row per API key the simulator accepts, naming its account (auth.ts)
 *   webhook_endpoints one row per URL an account's events are posted to, with its signing secret
 *   events            one row per event, written with the change it reports (events.ts)
 *   webhook_deliveries one row per event to deliver to one endpoint: its attempts (dispatcher.ts)
 *
 * Ids are Stripe-style text (`pi_…`), made by the simulator. API keys are
 * never stored, only their SHA-256; an account is the SHA-256 of its first
 * key (`account`), which is what scopes keys and objects: one account can
 * neither see nor collide with another's.
 */
export const SIMULATOR_SCHEMA = "payment_simulator";

// An arbitrary constant of our own (not Prisma's 72707369), so the simulator's
// start-up and OncePay's migration runner never wait for each other.
const SCHEMA_LOCK_ID = 0x5ea1_5111;

const STATEMENTS = [
  `CREATE SCHEMA IF NOT EXISTS payment_simulator`,
  `CREATE TABLE IF NOT EXISTS payment_simulator.payment_intents (
     id              text PRIMARY KEY,
     account         text NOT NULL,
     amount          bigint NOT NULL CHECK (amount > 0),
     currency        text NOT NULL,
     status          text NOT NULL CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'requires_action', 'succeeded')),
     payment_method  text,
     payment_method_types text[] NOT NULL,
     latest_charge   text,
     last_payment_error jsonb,
     client_secret   text NOT NULL,
     description     text,
     metadata        jsonb NOT NULL DEFAULT '{}',
     idempotency_key text,
     created         bigint NOT NULL DEFAULT extract(epoch FROM now())::bigint
   )`,
  // Added after the table: a database made before it gains the column here.
  `ALTER TABLE payment_simulator.payment_intents ADD COLUMN IF NOT EXISTS automatic_payment_methods jsonb`,
  // Added with 3-D Secure: where the challenge page sends the shopper back,
  // and what the intent shows as next_action while it waits for them.
  `ALTER TABLE payment_simulator.payment_intents ADD COLUMN IF NOT EXISTS return_url text`,
  `ALTER TABLE payment_simulator.payment_intents ADD COLUMN IF NOT EXISTS next_action jsonb`,
  // A table made before 3-D Secure has the narrower status CHECK: widen it,
  // once (the catalog is read first, so a later start does not rescan the table).
  `DO $$ BEGIN
     IF NOT EXISTS (SELECT 1 FROM pg_constraint
                     WHERE conrelid = 'payment_simulator.payment_intents'::regclass
                       AND conname = 'payment_intents_status_check'
                       AND pg_get_constraintdef(oid) LIKE '%requires_action%') THEN
       ALTER TABLE payment_simulator.payment_intents DROP CONSTRAINT IF EXISTS payment_intents_status_check;
       ALTER TABLE payment_simulator.payment_intents ADD CONSTRAINT payment_intents_status_check
         CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'requires_action', 'succeeded'));
     END IF;
   END $$`,
  `CREATE INDEX IF NOT EXISTS payment_intents_by_key ON payment_simulator.payment_intents (account, idempotency_key)`,
  // For the search (search.ts: `metadata @> …`). OncePay charges every order
  // under one account, so the account narrows nothing and, without this, each
  // lookup would read every intent the shop ever made. jsonb_path_ops: the
  // smaller GIN, and containment is the only operator the search uses.
  `CREATE INDEX IF NOT EXISTS payment_intents_by_metadata ON payment_simulator.payment_intents USING gin (metadata jsonb_path_ops)`,
  `CREATE TABLE IF NOT EXISTS payment_simulator.charges (
     id              text PRIMARY KEY,
     account         text NOT NULL,
     payment_intent  text NOT NULL REFERENCES payment_simulator.payment_intents (id),
     amount          bigint NOT NULL,
     currency        text NOT NULL,
     status          text NOT NULL CHECK (status IN ('succeeded', 'failed')),
     payment_method  text NOT NULL,
     failure_code    text,
     decline_code    text,
     failure_message text,
     created         bigint NOT NULL DEFAULT extract(epoch FROM now())::bigint
   )`,
  `CREATE INDEX IF NOT EXISTS charges_by_payment_intent ON payment_simulator.charges (payment_intent)`,
  // Added with refunds: a database made before them gains the column here,
  // every existing charge unrefunded. The running total is what
  // refund-ledger.ts locks and checks, so concurrent refunds of one charge
  // take turns on its row; the CHECK is the last word should a refund ever
  // skip that check.
  `ALTER TABLE payment_simulator.charges ADD COLUMN IF NOT EXISTS amount_refunded bigint NOT NULL DEFAULT 0
     CHECK (amount_refunded >= 0 AND amount_refunded <= amount)`,
  // `seq` orders an account's refunds newest first, exactly: refunds of one
  // charge insert while holding its row lock, so their seq is their commit
  // order, where `created` (whole seconds) ties. `created` is read when the
  // row is written (clock_timestamp), after that lock, not when its
  // transaction began, so it never runs backwards against seq by more than
  // the clock does.
  `CREATE TABLE IF NOT EXISTS payment_simulator.refunds (
     id              text PRIMARY KEY,
     seq             bigint GENERATED ALWAYS AS IDENTITY,
     account         text NOT NULL,
     payment_intent  text NOT NULL REFERENCES payment_simulator.payment_intents (id),
     charge          text NOT NULL REFERENCES payment_simulator.charges (id),
     amount          bigint NOT NULL CHECK (amount > 0),
     currency        text NOT NULL,
     status          text NOT NULL CHECK (status IN ('succeeded')),
     reason          text CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer')),
     payment_method  text,
     metadata        jsonb NOT NULL DEFAULT '{}',
     idempotency_key text,
     created         bigint NOT NULL DEFAULT extract(epoch FROM clock_timestamp())::bigint
   )`,
  `CREATE INDEX IF NOT EXISTS refunds_by_payment_intent ON payment_simulator.refunds (payment_intent, seq)`,
  `CREATE INDEX IF NOT EXISTS refunds_by_account ON payment_simulator.refunds (account, seq)`,
  // The primary key is the claim: one row per (account, key), so of any number
  // of concurrent INSERTs for one key exactly one gets a row back.
  `CREATE TABLE IF NOT EXISTS payment_simulator.idempotency_keys (
     account          text NOT NULL,
     idem_key         text NOT NULL,
     fingerprint      text NOT NULL,
     state            text NOT NULL CHECK (state IN ('in_flight', 'complete')),
     lock_owner       uuid,
     locked_until     timestamptz,
     response_status  integer,
     response_body    text,
     original_request text NOT NULL,
     created_at       timestamptz NOT NULL DEFAULT now(),
     expires_at       timestamptz NOT NULL,
     PRIMARY KEY (account, idem_key),
     CHECK ((state = 'complete') = (response_status IS NOT NULL AND response_body IS NOT NULL))
   )`,
  // Kept in the database, not in one process's memory, so that every
  // simulator on it accepts the same keys and a restart forgets none.
  `CREATE TABLE IF NOT EXISTS payment_simulator.api_keys (
     key_sha256 text PRIMARY KEY,
     account    text NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  // `configured`: made from SIMULATOR_WEBHOOK_URL at start-up, one per
  // account and URL (the partial unique index), so simulators starting at
  // once, or again, make one endpoint and not one each. Endpoints made
  // through the API (POST /v1/webhook_endpoints) may repeat a URL, as at Stripe.
  // `held`: its deliveries wait until the admin API releases them.
  // `retry_schedule_ms`: the waits between its deliveries' attempts, fixed
  // when it is made, so every simulator on the database retries them alike.
  `CREATE TABLE IF NOT EXISTS payment_simulator.webhook_endpoints (
     id             text PRIMARY KEY,
     account        text NOT NULL,
     url            text NOT NULL,
     secret         text NOT NULL,
     enabled_events text[] NOT NULL,
     description    text,
     configured     boolean NOT NULL DEFAULT false,
     held           boolean NOT NULL DEFAULT false,
     retry_schedule_ms integer[] NOT NULL,
     created        bigint NOT NULL DEFAULT extract(epoch FROM now())::bigint
   )`,
  `CREATE UNIQUE INDEX IF NOT EXISTS webhook_endpoints_configured
     ON payment_simulator.webhook_endpoints (account, url) WHERE configured`,
  `CREATE INDEX IF NOT EXISTS webhook_endpoints_by_account ON payment_simulator.webhook_endpoints (account)`,
  // `body`: the event exactly as every delivery of it sends it.
  `CREATE TABLE IF NOT EXISTS payment_simulator.events (
     id             text PRIMARY KEY,
     seq            bigint GENERATED ALWAYS AS IDENTITY,
     account        text NOT NULL,
     type           text NOT NULL,
     payment_intent text,
     body           text NOT NULL,
     created        bigint NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS events_by_payment_intent ON payment_simulator.events (payment_intent, seq)`,
  `CREATE INDEX IF NOT EXISTS events_by_account ON payment_simulator.events (account, seq)`,
  `CREATE TABLE IF NOT EXISTS payment_simulator.webhook_deliveries (
     id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     event           text NOT NULL REFERENCES payment_simulator.events (id),
     endpoint        text NOT NULL REFERENCES payment_simulator.webhook_endpoints (id) ON DELETE CASCADE,
     state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts        integer NOT NULL DEFAULT 0,
     next_attempt_at timestamptz NOT NULL DEFAULT now(),
     last_status     integer,
     last_error      text,
     delivered_at    timestamptz,
     created_at      timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_due
     ON payment_simulator.webhook_deliveries (next_attempt_at) WHERE state = 'pending'`,
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON payment_simulator.webhook_deliveries (event)`,
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint
     ON payment_simulator.webhook_deliveries (endpoint) WHERE state = 'pending'`,
];

/**
 * Creates the schema if it is missing. Several simulators may start at once
 * against one database, and two concurrent `CREATE TABLE IF NOT EXISTS` can
 * both pass their existence check and then collide on the catalog's unique
 * index (a duplicate-key error instead of a no-op). The transaction-level
 * advisory lock makes them take turns; the second finds everything there.
 */
export async function ensureSimulatorSchema(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK_ID]);
    for (const statement of STATEMENTS) await client.query(statement);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
