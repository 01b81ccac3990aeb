-- Rate limits shared by every app instance: rate-limiter-flexible's
-- PostgreSQL store, one row per limited caller and window (its own column
-- names and types). UNLOGGED: a counter writes no WAL, so its commit waits
-- for no disk flush and adds no durable commit to a checkout; a crash of
-- PostgreSQL empties the table, which only starts every window afresh.
CREATE UNLOGGED TABLE "rate_limits" (
  "key"    VARCHAR(255) PRIMARY KEY,
  "points" INTEGER NOT NULL DEFAULT 0,
  "expire" BIGINT
);
