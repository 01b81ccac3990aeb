import { DatabaseSetupError } from "@/lib/db/database-setup-error";
import { ensureDatabase } from "@/lib/db/ensure-database";

/**
 * A start-up script's first step on a PostgreSQL server (`npm start`,
 * `npm run cluster`, the payment simulator): make the database when it is
 * missing and say so in one line; when that cannot be done, print one line
 * saying what to run and exit, before anything else has started.
 */
export async function ensureDatabaseAtStart(url: string, logPrefix: string): Promise<void> {
  try {
    const ensured = await ensureDatabase(url);
    if (ensured.kind === "created")
      console.log(`${logPrefix} database "${ensured.database}" did not exist: created it`);
    if (ensured.kind === "created-by-another")
      console.log(
        `${logPrefix} database "${ensured.database}" did not exist: another start-up created it meanwhile`,
      );
  } catch (error) {
    if (!(error instanceof DatabaseSetupError)) throw error;
    console.error(`${logPrefix} ${error.message}`);
    process.exit(1);
  }
}
