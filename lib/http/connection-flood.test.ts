import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cartBody, createAccount, postOrder, type ApiAccount } from "@/lib/testing/api-client";
import { startAppServer, type AppServer } from "@/lib/testing/app-server";
import { processesInGroup, stillRunning, type RunningProcess } from "@/lib/testing/processes";
import { connectionBound, HEADERS_TIMEOUT_MS } from "./server-limits";

/**
 * A flood of connections against a running app, the way a slow-headers
 * attack does it: sockets that each send the start of a request and then a
 * byte now and then, far more of them than the app has file descriptors
 * for, each one the app closes opened again. The app runs under a low
 * limit on open files (`ulimit -n`) so that the flood reaches it at once.
 * Before the app bounded its connections and timeouts (server-limits.ts),
 * such a flood used up its descriptors; its watch on its launcher then
 * failed and it stopped itself for good.
 */
const OPEN_FILES = 256;
const FLOOD = 3 * OPEN_FILES;

let app: AppServer;
let shopper: ApiAccount;
let started: RunningProcess[];
beforeAll(async () => {
  app = await startAppServer({ openFilesLimit: OPEN_FILES });
  shopper = await createAccount(app.baseUrl);
  started = processesInGroup(app.processGroup);
});
afterAll(async () => {
  await app?.stop();
});

const port = () => Number(new URL(app.baseUrl).port);

/** A socket that starts a request and then sends one more byte of a header every `everyMs`. */
function trickle(everyMs: number): { socket: net.Socket; closedByServer: Promise<void> } {
  const socket = net.connect(port(), "127.0.0.1");
  socket.setNoDelay(true);
  socket.on("error", () => undefined); // a reset is one way the server may close it
  socket.once("connect", () => socket.write("POST /api/orders HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  const timer = setInterval(() => socket.writable && socket.write("a"), everyMs);
  const closedByServer = new Promise<void>((resolve) =>
    socket.once("close", () => {
      clearInterval(timer);
      resolve();
    }),
  );
  return { socket, closedByServer };
}

/** Keeps `size` trickling sockets open, opening another for each the server closes, until stopped. */
function flood(size: number) {
  let stopped = false;
  let closedByServer = 0;
  const open = new Set<net.Socket>();
  const keepOne = () => {
    if (stopped) return;
    const { socket, closedByServer: closed } = trickle(1000);
    open.add(socket);
    void closed.then(() => {
      open.delete(socket);
      if (stopped) return;
      closedByServer++;
      setTimeout(keepOne, 10);
    });
  };
  for (let index = 0; index < size; index++) keepOne();
  return {
    closedByServer: () => closedByServer,
    stop() {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

/** How many files the app's Next.js process has open now. */
function openFilesOfNext(): number {
  const next = started.find((process) => process.commandLine.startsWith("next-server"));
  if (!next) throw new Error(`No Next.js among ${started.map((process) => process.commandLine)}`);
  return readdirSync(`/proc/${next.pid}/fd`).length;
}

/** A checkout over one kept-alive connection, made before the flood began. */
function checkoutOver(agent: http.Agent): Promise<number> {
  const body = JSON.stringify(cartBody());
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${app.baseUrl}/api/orders`,
      {
        method: "POST",
        agent,
        headers: {
          Authorization: `Bearer ${shopper.token}`,
          "Content-Type": "application/json",
          "Idempotency-Key": randomUUID(),
        },
      },
      (response) => {
        response.resume();
        response.once("end", () => resolve(response.statusCode!));
      },
    );
    request.once("error", reject);
    request.end(body);
  });
}

describe("a connection flood", () => {
  it("closes a connection whose headers trickle in, within the headers timeout", async () => {
    const { socket, closedByServer } = trickle(500);
    try {
      const gaveUp = new Promise<string>((resolve) =>
        setTimeout(() => resolve("still open"), 3 * HEADERS_TIMEOUT_MS),
      );
      expect(await Promise.race([closedByServer.then(() => "closed by the app"), gaveUp])).toBe(
        "closed by the app",
      );
    } finally {
      socket.destroy();
    }
  }, 60_000);

  it("past the app's descriptors: a client already connected still pays, and once it ends a new one does, served by the same processes", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await checkoutOver(agent)).toBe(201);
      const attack = flood(FLOOD);
      try {
        // The bound is reached: the app closes connections as it accepts them.
        await expect
          .poll(() => attack.closedByServer(), { timeout: 60_000 })
          .toBeGreaterThan(FLOOD - connectionBound(OPEN_FILES));
        // ... and keeps descriptors free for everything else (unbounded, it
        // holds every one it may have, the last included, until EMFILE).
        expect(openFilesOfNext()).toBeLessThan(OPEN_FILES - 8);
        expect(await checkoutOver(agent)).toBe(201);
        expect(openFilesOfNext()).toBeLessThan(OPEN_FILES - 8);
      } finally {
        attack.stop();
      }
    } finally {
      agent.destroy();
    }

    // The app learns that the flood's sockets closed as it reads them, so for
    // a moment a new client can still find it at its bound and be closed at
    // once (seen once on a busy machine: a reset). The client retries, as a
    // client does, under one key; an app that stopped for good never answers.
    const key = randomUUID();
    const body = cartBody();
    await expect
      .poll(() =>
        postOrder({ baseUrl: app.baseUrl, token: shopper.token, key, body }).then(
          ({ response }) => response.status,
          (error: unknown) => `no answer: ${String(error)}`,
        ),
      )
      .toBe(201);
    // Nothing stopped or restarted: the launcher, Next.js, the payment simulator.
    expect(stillRunning(started).map((process) => process.commandLine)).toEqual(
      started.map((process) => process.commandLine),
    );
  }, 120_000);
});
