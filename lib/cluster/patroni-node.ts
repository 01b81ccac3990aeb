import { chown, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { assertPostgresCanUse } from "@/lib/cluster/postgres-access";
import { postgresIds, POSTGRES_USER, runsAsRoot } from "@/lib/process/postgres-user";
import { startProcess, type GroupProcess } from "@/lib/process/process-group";

/**
 * One node of the replicated PostgreSQL (lib/cluster/patroni.ts): a Patroni
 * process, run as the postgres user, and the PostgreSQL it starts, with the
 * signals a test sends a machine that dies or stalls.
 */
export interface PatroniNode {
  readonly name: string;
  /** The cluster's database on this node, as its superuser. */
  readonly url: string;
  readonly pgPort: number;
  /** Patroni's REST API: /primary answers 200 on the leader only. */
  readonly restUrl: string;
  readonly restPort: number;
  /** Patroni's process (its process group's id). Replaced by start() after a kill. */
  readonly patroni: GroupProcess;
  /** The postmaster's pid, which Patroni starts in a session of its own; undefined while it is not running. */
  postmasterPid(): Promise<number | undefined>;
  /** SIGKILL to Patroni and to PostgreSQL: the machine is gone. */
  kill(): Promise<void>;
  /** SIGSTOP to Patroni and to PostgreSQL: a machine that stalls (a long GC, a VM paused). */
  freeze(): Promise<void>;
  /** SIGCONT after freeze() or withholdReplication(). */
  thaw(): Promise<void>;
  /**
   * SIGSTOP to this node's WAL senders: its standbys receive nothing more,
   * so they acknowledge nothing, while the node itself goes on (a network
   * that stalls between them). Stopping the standbys instead would not do:
   * what the senders already wrote waits in the kernel's socket buffers and
   * reaches them when they resume, even after this node has died.
   */
  withholdReplication(): Promise<void>;
  /** Starts Patroni again after kill(): the node rejoins as a standby (pg_rewind). */
  start(): Promise<void>;
}

/** The cluster's database, made at bootstrap and replicated to every node. */
export const DATABASE = "oncepay";
/** Where the cluster's keys live in etcd: under <namespace><scope>/. */
export const NAMESPACE = "/oncepay/";
export const SCOPE = "oncepay";
const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";

export interface NodeSettings {
  name: string;
  dir: string;
  pgPort: number;
  restPort: number;
  etcdPort: number;
  passwords: { superuser: string; replication: string };
  synchronous: boolean;
  output: "inherit" | ((chunk: string) => void);
}

export async function startNode(settings: NodeSettings): Promise<PatroniNode> {
  const configFile = path.join(settings.dir, "patroni.yml");
  const dataDir = path.join(settings.dir, "data");
  await mkdir(settings.dir, { recursive: true, mode: 0o700 });
  await writeFile(configFile, patroniConfig({ ...settings, dataDir }), { mode: 0o600 });
  if (runsAsRoot()) {
    const postgres = await postgresIds();
    for (const owned of [settings.dir, configFile]) await chown(owned, postgres.uid, postgres.gid);
  }
  // Before Patroni starts: what it cannot reach it reports only by exiting
  // (or PostgreSQL by not starting), the reason buried in its output.
  await assertPostgresCanUse([
    { what: `${settings.name}'s Patroni configuration`, path: configFile, use: "read" },
    { what: `${settings.name}'s folder (data, sockets, pgpass)`, path: settings.dir, use: "write" },
    ...["initdb", "pg_ctl", "postgres", "pg_rewind", "pg_basebackup"].map((program) => ({
      what: "PostgreSQL's program",
      path: path.join(POSTGRES_BIN, program),
      use: "run" as const,
    })),
  ]);
  const launch = () =>
    startProcess({
      command: "patroni",
      args: [configFile],
      output: settings.output,
      endsWithStarter: true,
      runAsUser: POSTGRES_USER,
    });
  let patroni = launch();
  const postmasterPid = async () => {
    const pidFile = await readFile(path.join(dataDir, "postmaster.pid"), "utf8").catch(() => "");
    const pid = Number(pidFile.split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  };
  // Patroni starts the postmaster in a session of its own (so that Patroni's
  // death does not stop PostgreSQL), and PostgreSQL puts each of its
  // processes in a session of its own: a signal meant for the whole node
  // goes to Patroni's group (a negative pid), the postmaster and each of its children.
  const nodeProcesses = async () => {
    const postmaster = await postmasterPid();
    const postgresProcesses =
      postmaster === undefined ? [] : [postmaster, ...(await childrenOf(postmaster))];
    return [-patroni.pid, ...postgresProcesses];
  };
  const signalNode = async (signal: NodeJS.Signals) => {
    for (const pid of await nodeProcesses()) signalProcess(pid, signal);
  };
  const guards: GroupProcess[] = [];
  // Stops processes until `thaw`. A stopped process keeps even its
  // parent-death signal pending until it is continued, so a node frozen
  // when its test died would stay, stopped, for good: a guard that ends
  // with the starter continues them, and they end as an unfrozen node does.
  const stopUntilThawed = (pids: number[]) => {
    guards.push(continuedWhenStarterDies(pids));
    for (const pid of pids) signalProcess(pid, "SIGSTOP");
  };
  const superuser = `postgres:${settings.passwords.superuser}`;
  return {
    name: settings.name,
    url: `postgresql://${superuser}@127.0.0.1:${settings.pgPort}/${DATABASE}`,
    pgPort: settings.pgPort,
    restUrl: `http://127.0.0.1:${settings.restPort}`,
    restPort: settings.restPort,
    get patroni() {
      return patroni;
    },
    postmasterPid,
    async kill() {
      await signalNode("SIGKILL");
      await patroni.exited;
    },
    freeze: async () => stopUntilThawed(await nodeProcesses()),
    async thaw() {
      await signalNode("SIGCONT");
      await Promise.all(guards.splice(0).map((guard) => guard.stop(2_000)));
    },
    async withholdReplication() {
      const postmaster = await postmasterPid();
      if (postmaster === undefined) throw new Error(`${settings.name} runs no PostgreSQL`);
      const walsenders: number[] = [];
      for (const pid of await childrenOf(postmaster))
        if ((await commandLineOf(pid)).includes("walsender")) walsenders.push(pid);
      stopUntilThawed(walsenders);
    },
    async start() {
      patroni = launch();
    },
  };
}

/** Patroni first (it stops its PostgreSQL on SIGTERM), then whatever is left. */
export async function stopNode(node: PatroniNode): Promise<void> {
  await node.thaw();
  await node.patroni.stop(15_000);
  const postmaster = await node.postmasterPid();
  if (postmaster !== undefined) signalGroup(postmaster, "SIGQUIT");
}

/**
 * A process that ends with the starter (its parent-death signal) and, as it
 * ends, continues `pids` (a negative one is a process group).
 */
function continuedWhenStarterDies(pids: number[]): GroupProcess {
  const targets = pids.map((pid) => (pid < 0 ? `-- ${pid}` : String(pid)));
  const continueAll = targets.map((target) => `kill -CONT ${target} 2>/dev/null`).join("; ");
  return startProcess({
    command: "bash",
    args: ["-c", `trap '${continueAll}; exit 0' TERM; while :; do sleep 1; done`],
    endsWithStarter: true,
    output: () => undefined,
  });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  signalProcess(-pid, signal);
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** The processes whose parent is `parent`, from /proc (field 4 of /proc/PID/stat). */
async function childrenOf(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // The command name, in parentheses, may hold spaces: fields start after its ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) === parent) children.push(Number(entry));
  }
  return children;
}

/** A PostgreSQL process's title ("postgres: walsender replicator …"), from /proc. */
async function commandLineOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).replaceAll("\0", " ");
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function patroniConfig(settings: NodeSettings & { dataDir: string }): string {
  const local = (port: number) => `127.0.0.1:${port}`;
  return JSON.stringify(
    {
      scope: SCOPE,
      namespace: NAMESPACE,
      name: settings.name,
      restapi: { listen: local(settings.restPort), connect_address: local(settings.restPort) },
      // etcd's v2 API, not v3: Patroni 3.0.2 (Debian's) renews its leader key
      // on v3 with an unconditional put, so a primary resumed after its key
      // expired writes it back over the new leader's (seen in the freeze
      // test; fixed upstream in 3.0.3, patroni/patroni#2689). On v2 the
      // renewal compares the key's value with its own name first.
      etcd: { hosts: [local(settings.etcdPort)] },
      bootstrap: {
        dcs: {
          // loop_wait + 2 × retry_timeout ≤ ttl, as Patroni requires.
          ttl: 10,
          loop_wait: 2,
          retry_timeout: 4,
          // Asynchronous, a standby may be far behind when the primary dies;
          // promoting it anyway (availability before durability) is what
          // that choice means, and what the broken variant must show.
          maximum_lag_on_failover: settings.synchronous ? 1048576 : 1024 ** 3,
          // A commit waits for the synchronous standby, and with none it
          // waits rather than going on alone (strict): Patroni promotes only
          // that standby, so it holds every acknowledged commit.
          synchronous_mode: settings.synchronous,
          synchronous_mode_strict: settings.synchronous,
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              wal_level: "replica",
              hot_standby: "on",
              wal_log_hints: "on",
              max_wal_senders: 10,
              max_replication_slots: 10,
              max_connections: 200,
              // The default 5 s added as much to a failover's write outage.
              wal_retrieve_retry_interval: "1s",
            },
          },
        },
        initdb: [{ encoding: "UTF8" }, { locale: "C.UTF-8" }, "data-checksums"],
      },
      postgresql: {
        listen: local(settings.pgPort),
        connect_address: local(settings.pgPort),
        data_dir: settings.dataDir,
        bin_dir: POSTGRES_BIN,
        pgpass: path.join(settings.dir, "pgpass"),
        authentication: {
          superuser: { username: "postgres", password: settings.passwords.superuser },
          replication: { username: "replicator", password: settings.passwords.replication },
        },
        // Every client proves a password made at start: the nodes listen on
        // 127.0.0.1, where any user of the machine could otherwise connect.
        pg_hba: [
          "local all all peer",
          "host replication replicator 127.0.0.1/32 scram-sha-256",
          "host all all 127.0.0.1/32 scram-sha-256",
        ],
        parameters: { unix_socket_directories: settings.dir },
      },
    },
    null,
    2,
  );
}
