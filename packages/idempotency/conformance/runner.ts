import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/**
 * A runner for the conformance vectors of sns45/anyonce (vectors/README.md
 * says where they come from), over real HTTP. It follows that suite's
 * execution rules: POST /reset before each vector; steps in order; a step
 * named in a later step's `concurrentWith` is sent and left pending, that
 * later step waits its `delayMs` and is sent while they are, and the group
 * is awaited and checked with one GET /counter read; `handlerInvocations` is
 * that counter once the step (or its group) has settled.
 */

export type Tier = "core" | "profile";

type HeaderExpectation = string | { present: true } | { absent: true } | { regex: string };

interface Step {
  id: string;
  delayMs?: number;
  concurrentWith?: string[];
  request: { method: string; path: string; headers?: Record<string, string>; body?: string };
  expect: {
    status: number;
    headers?: Record<string, HeaderExpectation>;
    bodyEquals?: string | { sameAs: string };
    bodyJson?: Record<string, string | number | boolean | null>;
    bodyBytes?: number;
    handlerInvocations?: number;
  };
}

export interface Vector {
  id: string;
  tier: Tier;
  title: string;
  draftRef?: string;
  description: string;
  requires?: string[];
  fixture: string;
  steps: Step[];
}

export interface VectorResult {
  id: string;
  /** not-applicable: the vector needs a capability the target was not declared to have. */
  status: "pass" | "fail" | "not-applicable" | "error";
  /** What did not hold, each prefixed with its step's id; empty on a pass. */
  failures: string[];
}

interface Observed {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

export const VECTORS_DIR = path.join(import.meta.dirname, "vectors");

/** The vectors of a tier, sorted by id. */
export async function loadVectors(tier: Tier, dir = VECTORS_DIR): Promise<Vector[]> {
  const folder = path.join(dir, tier);
  const names = (await readdir(folder)).filter((name) => name.endsWith(".json"));
  const vectors = await Promise.all(
    names.map(
      async (name) => JSON.parse(await readFile(path.join(folder, name), "utf8")) as Vector,
    ),
  );
  return vectors.sort((a, b) => a.id.localeCompare(b.id));
}

export async function runVectors(
  baseUrl: string,
  vectors: Vector[],
  capabilities: string[] = [],
): Promise<VectorResult[]> {
  const results: VectorResult[] = [];
  // One after another: every vector resets the target's one counter.
  for (const vector of vectors) {
    const missing = (vector.requires ?? []).filter((need) => !capabilities.includes(need));
    results.push(
      missing.length > 0
        ? { id: vector.id, status: "not-applicable", failures: [`requires ${missing.join(", ")}`] }
        : await runVector(baseUrl, vector),
    );
  }
  return results;
}

export async function runVector(baseUrl: string, vector: Vector): Promise<VectorResult> {
  const send = async (request: Step["request"]): Promise<Observed> => {
    const response = await fetch(new URL(request.path, baseUrl), {
      method: request.method,
      headers: request.headers ?? {},
      ...(request.body !== undefined && { body: request.body }),
    });
    return { status: response.status, headers: response.headers, body: await bytes(response) };
  };
  const failures: string[] = [];
  const bodies = new Map<string, Uint8Array>();
  const deferred = new Set(vector.steps.flatMap((step) => step.concurrentWith ?? []));
  const pending = new Map<string, { step: Step; response: Promise<Observed> }>();

  const check = async (group: { step: Step; response: Observed }[]) => {
    const counted = group.some(({ step }) => step.expect.handlerInvocations !== undefined);
    const invocations = counted ? await readCounter(send) : undefined;
    for (const { step, response } of group) {
      for (const failure of judge(step, response, bodies, invocations))
        failures.push(`${step.id}: ${failure}`);
      bodies.set(step.id, response.body);
    }
  };
  const settle = async (entries: { step: Step; response: Promise<Observed> }[]) =>
    check(
      await Promise.all(
        entries.map(async ({ step, response }) => ({ step, response: await response })),
      ),
    );

  try {
    const reset = await send({ method: "POST", path: "/reset" });
    if (reset.status < 200 || reset.status >= 300)
      return { id: vector.id, status: "error", failures: [`reset answered ${reset.status}`] };
    for (const step of vector.steps) {
      const partners = step.concurrentWith ?? [];
      if (partners.length === 0 && pending.size > 0) {
        await settle([...pending.values()]);
        pending.clear();
      }
      if (step.delayMs) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
      const response = send(step.request);
      if (deferred.has(step.id)) {
        // Awaited later; until then a failure must not count as unhandled.
        response.catch(() => undefined);
        pending.set(step.id, { step, response });
        continue;
      }
      const group = partners.map((id) => {
        const entry = pending.get(id);
        if (!entry)
          throw new Error(`step ${step.id}: concurrentWith names ${id}, which is not pending`);
        pending.delete(id);
        return entry;
      });
      await settle([...group, { step, response }]);
    }
    await settle([...pending.values()]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { id: vector.id, status: "error", failures: [...failures, message] };
  }
  return { id: vector.id, status: failures.length === 0 ? "pass" : "fail", failures };
}

async function bytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

async function readCounter(send: (request: Step["request"]) => Promise<Observed>) {
  const response = await send({ method: "GET", path: "/counter" });
  try {
    const { count } = JSON.parse(new TextDecoder().decode(response.body)) as { count?: unknown };
    return response.status === 200 && typeof count === "number" ? count : undefined;
  } catch {
    return undefined;
  }
}

/** What of a step's expectation the response does not meet. */
function judge(
  step: Step,
  response: Observed,
  bodies: Map<string, Uint8Array>,
  invocations: number | undefined,
): string[] {
  const { expect } = step;
  const failures: string[] = [];
  const text = new TextDecoder().decode(response.body);
  if (response.status !== expect.status)
    failures.push(`status: expected ${expect.status}, got ${response.status}`);
  for (const [name, expected] of Object.entries(expect.headers ?? {})) {
    const actual = response.headers.get(name);
    const shown = actual === null ? "absent" : `"${actual}"`;
    if (typeof expected === "string") {
      if (actual !== expected)
        failures.push(`header ${name}: expected "${expected}", got ${shown}`);
    } else if ("present" in expected) {
      if (actual === null) failures.push(`header ${name}: expected present, got absent`);
    } else if ("absent" in expected) {
      if (actual !== null) failures.push(`header ${name}: expected absent, got ${shown}`);
    } else if (actual === null || !new RegExp(expected.regex).test(actual)) {
      failures.push(`header ${name}: expected /${expected.regex}/, got ${shown}`);
    }
  }
  if (typeof expect.bodyEquals === "string" && text !== expect.bodyEquals)
    failures.push(`body: expected "${expect.bodyEquals}", got "${text}"`);
  if (typeof expect.bodyEquals === "object") {
    const earlier = bodies.get(expect.bodyEquals.sameAs);
    if (earlier === undefined)
      failures.push(`body: sameAs names ${expect.bodyEquals.sameAs}, which has no body yet`);
    else if (!Buffer.from(earlier).equals(response.body))
      failures.push(
        `body: expected the bytes of step ${expect.bodyEquals.sameAs} (${earlier.byteLength} bytes), got ${response.body.byteLength} bytes that differ`,
      );
  }
  if (expect.bodyJson !== undefined) failures.push(...judgeJson(expect.bodyJson, text));
  if (expect.bodyBytes !== undefined && response.body.byteLength !== expect.bodyBytes)
    failures.push(`body: expected ${expect.bodyBytes} bytes, got ${response.body.byteLength}`);
  if (expect.handlerInvocations !== undefined && invocations !== expect.handlerInvocations)
    failures.push(
      `handlerInvocations: expected ${expect.handlerInvocations}, got ${invocations ?? "no counter"}`,
    );
  return failures;
}

// Each named member must equal the expected scalar; other members are not looked at.
function judgeJson(expected: Record<string, unknown>, text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return ["body: expected a JSON object, got unparseable text"];
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return ["body: expected a JSON object"];
  const record = parsed as Record<string, unknown>;
  return Object.entries(expected)
    .filter(([name, value]) => record[name] !== value)
    .map(
      ([name, value]) =>
        `body.${name}: expected ${JSON.stringify(value)}, got ${JSON.stringify(record[name])}`,
    );
}

/** One line per vector, as the CLI prints them and a failing test shows them. */
export function formatResults(results: VectorResult[]): string {
  return results
    .map(({ id, status, failures }) =>
      [
        `${status.toUpperCase().padEnd(14)} ${id}`,
        ...failures.map((failure) => `    ${failure}`),
      ].join("\n"),
    )
    .join("\n");
}
