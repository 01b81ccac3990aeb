import path from "node:path";

/** Where the e2e server's launcher writes the database URL it ended up using. */
export const E2E_DATABASE_URL_FILE = path.resolve(".data", "e2e-database-url");
