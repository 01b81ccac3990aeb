// dynalite ships no types; the lab uses this much of it (scripts/lab-dynamodb.mts).
declare module "dynalite" {
  import type { Server } from "node:http";

  interface DynaliteOptions {
    /** A LevelDB folder; in memory without it. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}
