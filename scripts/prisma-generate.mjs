// Generates the Prisma client into lib/generated/prisma (gitignored), from
// `postinstall`, so a fresh clone never depends on a committed client.
//
// `prisma generate` does not use Prisma's native schema engine, yet every
// Prisma CLI command first tries to download it. Pointing
// PRISMA_SCHEMA_ENGINE_BINARY at an executable that exists skips that download,
// which is what lets generation work on a machine that cannot reach Prisma's
// binary host. A value the caller set is kept.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const prismaCli = require.resolve("prisma/build/index.js");

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
};

const result = spawnSync(process.execPath, [prismaCli, "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
