import { defineConfig } from "prisma/config";

// The CLI reads the connection from here (Prisma 7 moved it out of the schema).
// Generation needs no database, so an unset DATABASE_URL must not fail it.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "" },
});
