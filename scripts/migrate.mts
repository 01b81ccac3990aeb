/** Applies pending migrations to DATABASE_URL (the app's launcher does this on start too). */
import { launcherEnv } from "../lib/env.ts";
import { migrate } from "../lib/db/migrate.ts";

const { DATABASE_URL } = launcherEnv();
if (!DATABASE_URL) {
  console.error(
    "DATABASE_URL is not set. (The embedded database is migrated by `npm start` itself.)",
  );
  process.exit(2);
}
const report = await migrate(DATABASE_URL);
console.log(report.applied.length > 0 ? `applied: ${report.applied.join(", ")}` : "up to date");
