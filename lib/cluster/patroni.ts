import { randomBytes } from "node:crypto";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { readLeaderKey } from "@/lib/cluster/leader-check";
import {
  allExited,
  anyExited,
  indent,
  keepLastLines,
  waitForCluster,
  type Member as WatchedProcess,
} from "@/lib/cluster/member-watch";
import {
  DATABASE,
  NAMESPACE,
  SCOPE,
  startNode,
  stopNode,
  type PatroniNode,
} from "@/lib/cluster/patroni-node";
import { isFatal, patroniState, withoutAbortedRequests } from "@/lib/cluster/patroni-state";
import { freePort } from "@/lib/process/free-port";
import { startProcess, type GroupProcess } from "@/lib/process/process-group";

export type { PatroniNode } from "@/lib/cluster/patroni-node";

export type MemberRole = "leader" | "sync_standby" | "replica";

export interface Member {
  name: string;
  role: MemberRole;
  /** "running", "streaming", "stopped", "starting", … as Patroni says. */
  state: string;
}

/**
 * PostgreSQL replicated and failed over by Patroni, on one machine: one etcd
 * member holds the leader key, and three nodes, each a Patroni process with
 * its PostgreSQL, elect a primary through it.
 *
 * Synchronous replication that never turns itself off
 * (`synchronous_mode_strict`): a commit made with `synchronous_commit = on`
 * returns only once the synchronous standby has flushed it, and with no
 * standby there it waits rather than going on alone. Patroni promotes only
 * the node it named synchronous, so the new primary holds every commit the
 * old one acknowledged. `synchronous: false` gives asynchronous replication
 * instead, where a promoted standby may lack acknowledged commits: the
 * variant that shows what synchronous replication buys.
 *
 * Timings (`ttl` 10 s, `loop_wait` 2 s, `retry_timeout` 4 s) put a failover
 * after a dead primary's leader key expires: about 10–15 s of no writes.
 */
export interface ReplicatedPostgres {
  readonly nodes: readonly PatroniNode[];
  readonly etcd: GroupProcess;
  /** The database every node serves (made at bootstrap, replicated to all). */
  readonly database: string;
  /** The members and their roles, as the first node that answers sees them. */
  members(): Promise<Member[]>;
  /** The node whose /primary answers 200, once one does. */
  leader(timeoutMs?: number): Promise<PatroniNode>;
  /** The member the leader key in etcd names, undefined while nobody holds it: who leads, by the DCS. */
  leaderInDcs(): Promise<string | undefined>;
  /** The synchronous standby, once the leader has named one. */
  syncStandby(timeoutMs?: number): Promise<PatroniNode>;
  /** Settles once every member runs, each standby streams, and (when synchronous) one is the synchronous standby. */
  whole(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ReplicatedPostgresOptions {
  /** Three by default: a leader, a synchronous standby and one more to fail over to after. */
  size?: number;
  /** false: asynchronous replication, the broken variant. */
  synchronous: boolean;
  workDir: string;
  output: "inherit" | ((chunk: string) => void);
}

const BOOTSTRAP_TIMEOUT_MS = 120_000;
/** Where Patroni keeps the leader key in etcd: <namespace><scope>/leader. */
const LEADER_KEY = `${NAMESPACE}${SCOPE}/leader`;

export async function startReplicatedPostgres(
  options: ReplicatedPostgresOptions,
): Promise<ReplicatedPostgres> {
  const size = options.size ?? 3;
  await mkdir(options.workDir, { recursive: true });
  // PostgreSQL runs as postgres and must pass through to its data directory.
  await chmod(options.workDir, 0o711);
  const passwords = {
    superuser: randomBytes(18).toString("base64url"),
    replication: randomBytes(18).toString("base64url"),
  };

  // Each process's last lines are kept for the error that says why it stopped.
  const etcdLines = keepLastLines(options.output);
  const etcdPort = await freePort();
  const etcd = startProcess({
    command: "etcd",
    args: etcdArgs(path.join(options.workDir, "etcd"), etcdPort, await freePort()),
    output: etcdLines.output,
    endsWithStarter: true,
  });
  const nodes: PatroniNode[] = [];
  const nodeLines = new Map<string, () => string>();
  const stopAll = async () => {
    for (const node of nodes) await stopNode(node);
    await etcd.stop();
  };
  const etcdMember: WatchedProcess = {
    name: "etcd",
    process: etcd,
    lastLines: etcdLines.lastLines,
  };
  try {
    await waitForCluster(async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok, {
      timeoutMs: 15_000,
      describe: () => `etcd on port ${etcdPort} did not start`,
      failed: async () => anyExited([etcdMember]),
    });
    for (let index = 1; index <= size; index++) {
      const name = `pg${index}`;
      const lines = keepLastLines(options.output, { keep: withoutAbortedRequests() });
      nodeLines.set(name, lines.lastLines);
      nodes.push(
        await startNode({
          name,
          dir: path.join(options.workDir, name),
          pgPort: await freePort(),
          restPort: await freePort(),
          etcdPort,
          passwords,
          synchronous: options.synchronous,
          output: lines.output,
        }),
      );
    }
    const cluster = replicatedPostgres({
      nodes,
      etcdMember,
      nodeLines,
      etcdUrl: `http://127.0.0.1:${etcdPort}`,
      synchronous: options.synchronous,
      stopAll,
    });
    await cluster.whole(BOOTSTRAP_TIMEOUT_MS);
    await createDatabase(await cluster.leader());
    return cluster;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function replicatedPostgres({
  nodes,
  etcdMember,
  nodeLines,
  etcdUrl,
  synchronous,
  stopAll,
}: {
  nodes: PatroniNode[];
  etcdMember: WatchedProcess;
  nodeLines: Map<string, () => string>;
  etcdUrl: string;
  synchronous: boolean;
  stopAll: () => Promise<void>;
}): ReplicatedPostgres {
  // Each node's Patroni as it runs now (start() replaces the process after a kill).
  const patronis = (): WatchedProcess[] =>
    nodes.map((node) => ({
      name: `${node.name}'s Patroni`,
      process: node.patroni,
      lastLines: nodeLines.get(node.name)!,
    }));
  /** Why no leader can come: etcd is gone, or every Patroni is (one killed by a test is not enough). */
  const noLeaderCan = async () => anyExited([etcdMember]) ?? allExited(patronis());
  /** Why the cluster cannot be whole: any of its processes is gone, or a node's PostgreSQL would not start. */
  const notWholeCan = async () => anyExited([etcdMember, ...patronis()]) ?? (await fatalState());
  const fatalState = async (): Promise<string | undefined> => {
    for (const node of nodes) {
      const state = await patroniState(node);
      if (state !== undefined && isFatal(state))
        return `${node.name}'s Patroni reports "${state}"; its last lines:\n${indent(nodeLines.get(node.name)!())}`;
    }
    return undefined;
  };
  const members = async (): Promise<Member[]> => {
    for (const node of nodes) {
      const answer = await fetch(`${node.restUrl}/cluster`, {
        signal: AbortSignal.timeout(1000),
      }).catch(() => undefined);
      if (answer?.ok) return ((await answer.json()) as { members: Member[] }).members;
    }
    return [];
  };
  const nodeWhere = async (
    found: () => Promise<PatroniNode | undefined>,
    what: string,
    timeoutMs: number,
  ): Promise<PatroniNode> => {
    let node: PatroniNode | undefined;
    await waitForCluster(async () => (node = await found()) !== undefined, {
      timeoutMs,
      describe: () => `No node became the ${what}`,
      failed: noLeaderCan,
    });
    return node!;
  };
  return {
    nodes,
    etcd: etcdMember.process,
    database: DATABASE,
    members,
    leader: (timeoutMs = 60_000) =>
      nodeWhere(
        async () => {
          for (const node of nodes) if (await answers200(`${node.restUrl}/primary`)) return node;
          return undefined;
        },
        "leader",
        timeoutMs,
      ),
    leaderInDcs: () => readLeaderKey(etcdUrl, LEADER_KEY),
    syncStandby: (timeoutMs = 60_000) =>
      nodeWhere(
        async () => {
          const sync = (await members()).find(
            (member) => member.role === "sync_standby" && isReplicating(member),
          );
          return nodes.find((node) => node.name === sync?.name);
        },
        "synchronous standby",
        timeoutMs,
      ),
    whole: (timeoutMs = 120_000) =>
      waitForCluster(
        async () => {
          // Each node asked itself: a dead node's member entry outlives it by up to ttl.
          const roles = await Promise.all(
            nodes.map(async (node) =>
              (await answers200(`${node.restUrl}/primary`))
                ? "primary"
                : (await answers200(`${node.restUrl}/replica`))
                  ? "replica"
                  : "neither",
            ),
          );
          const running = await members();
          return (
            roles.filter((role) => role === "primary").length === 1 &&
            roles.every((role) => role !== "neither") &&
            running.every(isReplicating) &&
            (!synchronous || running.some((member) => member.role === "sync_standby"))
          );
        },
        {
          timeoutMs,
          describe: () => `Not every member of the Patroni cluster was back and replicating`,
          failed: notWholeCan,
        },
      ),
    stop: stopAll,
  };
}

// Patroni 3.0 says "running" for a standby that streams; later versions say "streaming".
const isReplicating = (member: Member) =>
  member.state === "running" || member.state === "streaming";

async function answers200(url: string): Promise<boolean> {
  const answer = await fetch(url, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
  return answer?.status === 200;
}

function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    "--name=e1",
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=e1=${peer}`,
    "--initial-cluster-state=new",
    // Patroni keeps its keys in the v2 store (patroni-node.ts says why).
    "--enable-v2=true",
  ];
}

/** One node's patroni.yml (YAML is a superset of JSON: written as JSON). */
async function createDatabase(leader: PatroniNode): Promise<void> {
  const client = new pg.Client({ connectionString: leader.url.replace(/\/[^/]*$/, "/postgres") });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}
