-- The one table @oncepay/idempotency needs, for PostgreSQL 13 or later.
-- Apply it with your own migrations; the engine creates nothing by itself.

CREATE TABLE idempotency_keys (
  id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Whose key it is (an account, a tenant): keys are unique within a scope.
  scope                  text NOT NULL,
  idem_key               varchar(255) NOT NULL,
  -- Which operation runs under it, so the recovery worker can resume it.
  operation              varchar(100) NOT NULL,
  -- SHA-256 of method, path and canonical body: what makes two requests one.
  fingerprint            char(64) NOT NULL,
  -- What the operation keeps of the request, parsed again by a resume.
  request                jsonb,
  state                  text NOT NULL DEFAULT 'in_flight' CHECK (state IN ('in_flight', 'complete')),
  -- The phase the key is at; 'finished' once complete.
  recovery_point         varchar(100) NOT NULL,
  -- What the phases so far kept with the key.
  progress               jsonb NOT NULL DEFAULT '{}',
  -- When the key last moved (or its side-effect key changed); NULL while it
  -- is at its first point, when nothing but the claim was ever written.
  point_reached_at       timestamptz(3),
  -- When the key reached each point it moved to ({"point": time}), for
  -- people reading its story; the engine decides nothing from it.
  points_reached         jsonb NOT NULL DEFAULT '{}',
  -- Which of the request's side-effect keys is current.
  side_effect_generation integer NOT NULL DEFAULT 0,
  lease_owner            uuid,
  lease_expires_at       timestamptz(3),
  response_status        integer,
  response_headers       jsonb,
  response_body          jsonb,
  created_at             timestamptz(3) NOT NULL DEFAULT now(),
  completed_at           timestamptz(3),
  expires_at             timestamptz(3) NOT NULL,
  -- Whether a request waits for this key's attempt (Prefer: wait): only then
  -- does its completion, release or lease handed back NOTIFY, since
  -- PostgreSQL serialises the commits of notifying transactions.
  awaited                boolean NOT NULL DEFAULT false,
  CONSTRAINT idempotency_keys_scope_idem_key_key UNIQUE (scope, idem_key)
);

-- The reaper's work list (keys past their time to live).
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
-- The recovery worker's (in-flight keys whose lease ran out).
CREATE INDEX idempotency_keys_state_lease_expires_at_idx ON idempotency_keys (state, lease_expires_at);
