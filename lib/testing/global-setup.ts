import type { TestProject } from "vitest/node";
import { startAppServer } from "@/lib/testing/app-server";

/** One built app for the whole Vitest run; tests reach it through inject(). */
export default async function setup(project: TestProject) {
  const server = await startAppServer();
  project.provide("baseUrl", server.baseUrl);
  project.provide("databaseUrl", server.databaseUrl);
  project.provide("realPostgres", server.realPostgres);
  project.provide("paymentSimulatorUrl", server.paymentSimulatorUrl);
  if (!server.realPostgres) {
    console.warn("[tests] DATABASE_URL is not set: running on embedded PGlite, which serialises all statements, so the concurrency tests cannot expose races here. CI runs them on PostgreSQL.");
  }
  return () => server.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    databaseUrl: string;
    realPostgres: boolean;
    paymentSimulatorUrl: string;
  }
}
