import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * Stoplight Prism as a validating proxy: every request passes through to the
 * app unchanged in what it asks, and Prism judges each answer by the
 * OpenAPI document it was given, in an `sl-violations` header (a JSON list
 * of {location, severity, message}). A judge nobody here wrote, reading
 * the document as any API tool would.
 */
export interface PrismProxy {
  url: string;
  stop(): Promise<void>;
}

const LISTENING = /Prism is listening on (http:\/\/\S+)/;

export async function startPrismProxy(document: unknown, upstream: string): Promise<PrismProxy> {
  // A file of its own: Prism watches the file and reloads it when it changes.
  const documentPath = path.join(os.tmpdir(), `oncepay-openapi-${randomUUID()}.json`);
  writeFileSync(documentPath, JSON.stringify(document));
  const port = await freePort();
  const child = spawn(
    path.resolve("node_modules/.bin/prism"),
    [
      "proxy",
      documentPath,
      upstream,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--cors=false",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = LISTENING.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1]!);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => reject(new Error(`Prism exited (${code}):\n${output}`)));
  });
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(documentPath, { force: true });
    },
  };
}

export interface PrismViolation {
  location: string[];
  severity: string;
  message: string;
}

/** What Prism found wrong with the answer itself. */
export function answerViolations(response: Response): PrismViolation[] {
  return violations(response).filter((violation) => violation.location[0] === "response");
}

/** What Prism found wrong with the request (which a test may send wrong on purpose). */
export function requestViolations(response: Response): PrismViolation[] {
  return violations(response).filter((violation) => violation.location[0] === "request");
}

function violations(response: Response): PrismViolation[] {
  const header = response.headers.get("sl-violations");
  return header === null ? [] : (JSON.parse(header) as PrismViolation[]);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
