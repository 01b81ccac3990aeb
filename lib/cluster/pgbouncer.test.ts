import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { startPgBouncer, type PgBouncer } from "@/lib/cluster/pgbouncer";
import { freePort } from "@/lib/process/free-port";
import { describeOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The cluster's PgBouncer logs every client it admits in to PostgreSQL as
 * the database entry's user. It admits only a client that proves the
 * pooler's password (SCRAM-SHA-256, auth_file); with `auth_type = any` it
 * admitted whoever could reach its port, under any name.
 */
// PgBouncer's own answer (an ErrorResponse), not the client giving up.
const REFUSED = { severity: "FATAL", message: "SASL authentication failed" };
const AUTHENTICATION_OK = 0;
const AUTHENTICATION_SASL = 10;

let workDir: string;
let pooler: PgBouncer;

describeOnServer("pooler", "PgBouncer authenticates its clients", () => {
  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "oncepay-pgbouncer-"));
    pooler = await startPgBouncer({
      databaseUrl: inject("databaseUrl"),
      port: await freePort(),
      poolSize: 2,
      workDir,
      output: () => undefined,
    });
  }, 60_000);

  afterAll(async () => {
    await pooler?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      return (await client.query<{ ok: number }>("SELECT 1 AS ok")).rows[0]!.ok;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const withCredentials = (user: string, password: string) => {
    const url = new URL(pooler.url);
    url.username = user;
    url.password = password;
    return url.toString();
  };

  it("admits a client with the URL it hands out, which carries the password", async () => {
    expect(new URL(pooler.url).password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await connect(pooler.url)).toBe(1);
  });

  it("asks a client that comes without a password for one (SCRAM) instead of letting it in", async () => {
    const { username } = new URL(pooler.url);
    expect(await firstAuthenticationRequest(pooler.port, username, "postgres")).toBe(
      AUTHENTICATION_SASL,
    );
  });

  it("refuses a wrong password", async () => {
    const { username, password } = new URL(pooler.url);
    await expect(connect(withCredentials(username, `${password}x`))).rejects.toMatchObject(REFUSED);
  });

  it("refuses another user name, even with the pooler's password", async () => {
    await expect(
      connect(withCredentials("someone_else", new URL(pooler.url).password)),
    ).rejects.toMatchObject(REFUSED);
  });
});

/**
 * Sends a bare StartupMessage, as a client with no password does, and
 * reads the server's first Authentication message: 0 lets the client in
 * there and then, 10 asks it to prove a password by SCRAM first.
 */
async function firstAuthenticationRequest(
  port: number,
  user: string,
  database: string,
): Promise<number> {
  const parameters = Buffer.from(`user\0${user}\0database\0${database}\0\0`);
  const startup = Buffer.alloc(8 + parameters.length);
  startup.writeInt32BE(startup.length, 0);
  startup.writeInt32BE(196608, 4); // protocol 3.0
  parameters.copy(startup, 8);
  const socket = net.connect(port, "127.0.0.1");
  try {
    const answer = await new Promise<Buffer>((resolve, reject) => {
      let received = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length >= 9) resolve(received);
      });
      socket.on("error", reject);
      socket.on("close", () => reject(new Error("The pooler closed the connection")));
      socket.on("connect", () => socket.write(startup));
    });
    expect(String.fromCharCode(answer[0]!), "an Authentication message").toBe("R");
    const request = answer.readInt32BE(5);
    expect([AUTHENTICATION_OK, AUTHENTICATION_SASL]).toContain(request);
    return request;
  } finally {
    socket.destroy();
  }
}
