import path from "node:path";

/** Where the e2e server's launcher writes the database URL it ended up using. */
export const E2E_DATABASE_URL_FILE = path.resolve(".data", "e2e-database-url");

/** Where the e2e server's payment simulator listens: next to the app, so a test can reach its admin API. */
export const e2eSimulatorPort = (appPort: number) => appPort + 1;

/** The admin key the launcher makes once and keeps (SIMULATOR_ADMIN_KEY_FILE's default). */
export const E2E_SIMULATOR_ADMIN_KEY_FILE = path.resolve(".data", "simulator-admin-key");
