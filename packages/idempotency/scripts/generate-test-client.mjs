// Generates the Prisma client the tests of prismaStore use, into
// test/prisma/generated (ignored by git).
//
// Every Prisma CLI command first tries to download Prisma's native schema
// engine, which generation does not use; pointing PRISMA_SCHEMA_ENGINE_BINARY
// at any executable skips that, so generation works offline. A value the
// caller set is kept. The CLI's config loader (jiti) would keep a cache in
// /tmp/jiti when the package has no node_modules folder of its own (a clean
// clone): a folder left behind on every machine that runs the tests.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const prismaCli = require.resolve("prisma/build/index.js");
const schema = new URL("../test/prisma/schema.prisma", import.meta.url).pathname;

const result = spawnSync(process.execPath, [prismaCli, "generate", "--schema", schema], {
  stdio: "inherit",
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath,
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    JITI_FS_CACHE: "false",
  },
});
process.exit(result.status ?? 1);
