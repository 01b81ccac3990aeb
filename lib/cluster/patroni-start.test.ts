import { chmod, mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startReplicatedPostgres, type ReplicatedPostgres } from "@/lib/cluster/patroni";
import { describeOnServer, itOnServer } from "@/lib/testing/postgres-server-only";

/**
 * The replicated PostgreSQL fails at once, with the reason, when it cannot
 * work: before starting, when the postgres user (which runs Patroni and
 * PostgreSQL) cannot reach its files; while waiting, as soon as a member has
 * exited or Patroni has given up on a node's PostgreSQL. Each used to show
 * only after the 120 s wait for the cluster to be whole, as "not ready".
 */
const NOT_READY = /not ready within/;

itOnServer(
  "replication",
  "refuses to start at once, naming the folder, when the postgres user cannot enter the cluster's folder",
  async () => {
    // Mode 0000: postgres cannot pass (nor could the user itself, when not root).
    const closed = await mkdtemp(path.join(tmpdir(), "oncepay-closed-"));
    await chmod(closed, 0o000);
    try {
      const start = startReplicatedPostgres({
        synchronous: true,
        size: 2,
        workDir: path.join(closed, "patroni"),
        output: () => undefined,
      });
      const error = await start.then(
        (cluster) => cluster.stop().then(() => new Error("It started")),
        (refused: unknown) => refused as Error,
      );
      expect(error.message).toContain(closed);
      expect(error.message).not.toMatch(NOT_READY);
    } finally {
      await chmod(closed, 0o700);
      await rm(closed, { recursive: true, force: true });
    }
  },
);

describeOnServer("replication", "waiting for the replicated PostgreSQL to be whole", () => {
  let workDir: string;
  let cluster: ReplicatedPostgres;
  let squatter: net.Server | undefined;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "oncepay-patroni-start-"));
    // Others may pass (not list): the nodes run as postgres below it.
    await chmod(workDir, 0o711);
    cluster = await startReplicatedPostgres({
      synchronous: true,
      size: 2,
      workDir: path.join(workDir, "patroni"),
      output: () => undefined,
    });
  }, 120_000);

  afterAll(async () => {
    squatter?.close();
    await cluster?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const standby = async () => {
    const leader = await cluster.leader();
    return cluster.nodes.find((node) => node !== leader)!;
  };

  it("stops at once when a node's Patroni has exited, naming it", async () => {
    const gone = await standby();
    await gone.kill();

    const error = await cluster.whole().then(
      () => new Error("It was whole"),
      (refused: unknown) => refused as Error,
    );
    expect(error.message).toContain(`${gone.name}'s Patroni was killed by a signal`);
    expect(error.message).not.toMatch(NOT_READY);
  });

  it("stops at once when Patroni cannot start a node's PostgreSQL, with PostgreSQL's own words", async () => {
    // The node's port taken while it is down: its PostgreSQL exits at start.
    const down = await standby();
    await down.kill();
    squatter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => squatter!.listen(down.pgPort, "127.0.0.1", resolve));
    await down.start();

    const error = await cluster.whole().then(
      () => new Error("It was whole"),
      (refused: unknown) => refused as Error,
    );
    expect(error.message).toContain(`${down.name}'s Patroni reports "start failed"`);
    expect(error.message).toContain("could not bind");
    expect(error.message).not.toMatch(NOT_READY);
  }, 60_000);
});
