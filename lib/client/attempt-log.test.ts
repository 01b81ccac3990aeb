import { describe, expect, it } from "vitest";
import {
  finishAttempt,
  interruptAttempt,
  markInterrupted,
  nextRun,
  parseAttemptLog,
  startAttempt,
  summarize,
  type AttemptLog,
} from "./attempt-log";
import type { AttemptInfo } from "./checkout";

function answer(n: number, fields: Partial<AttemptInfo>): AttemptInfo {
  return {
    n,
    maxAttempts: 8,
    status: null,
    failure: null,
    requestId: null,
    replayed: false,
    waited: false,
    durationMs: 10,
    orderId: null,
    retryInMs: null,
    ...fields,
  };
}

describe("attempt log", () => {
  it("numbers attempts across runs and fills each in when its answer arrives", () => {
    let log: AttemptLog = [];
    // Two overlapping runs of one intent (a double-click): their attempts interleave.
    log = startAttempt(log, 1, 1);
    log = startAttempt(log, 2, 1);
    log = finishAttempt(log, 2, answer(1, { status: 409, requestId: "req_b", retryInMs: 1000 }));
    log = finishAttempt(log, 1, answer(1, { status: 201, requestId: "req_a", orderId: "ord_1" }));
    log = startAttempt(log, 2, 2);
    log = finishAttempt(
      log,
      2,
      answer(2, { status: 201, requestId: "req_c", orderId: "ord_1", replayed: true }),
    );

    expect(
      log.map((e) => [e.seq, e.run, e.runAttempt, e.state, e.status, e.requestId, e.replayed]),
    ).toEqual([
      [1, 1, 1, "done", 201, "req_a", false],
      [2, 2, 1, "done", 409, "req_b", false],
      [3, 2, 2, "done", 201, "req_c", true],
    ]);
    expect(summarize(log)).toEqual({ attempts: 3, replays: 1, orders: 1 });
    expect(nextRun(log)).toBe(3);
  });

  it("marks the attempts a reload cut off as interrupted, and keeps the answered ones", () => {
    let log: AttemptLog = startAttempt([], 1, 1);
    log = finishAttempt(log, 1, answer(1, { failure: "timeout", retryInMs: 250 }));
    log = startAttempt(log, 1, 2);

    const after = markInterrupted(log);
    expect(after.map((e) => e.state)).toEqual(["done", "interrupted"]);
    expect(after[0]?.retryInMs).toBe(250);
    expect(summarize(after)).toEqual({ attempts: 2, replays: 0, orders: 0 });
  });

  it("records an answer even if its start was never logged", () => {
    const log = finishAttempt([], 1, answer(1, { status: 201, orderId: "ord_9" }));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ seq: 1, state: "done", orderId: "ord_9" });
  });

  it("reads back only what looks like a log", () => {
    const log = startAttempt([], 1, 1);
    expect(parseAttemptLog(JSON.parse(JSON.stringify(log)))).toEqual(log);
    expect(parseAttemptLog([{ seq: 1 }])).toEqual([]);
    expect(parseAttemptLog("nope")).toEqual([]);
  });
});

describe("interruptAttempt", () => {
  it("marks one attempt as cut off by the page going away, leaving the others", () => {
    let log: AttemptLog = startAttempt([], 1, 1);
    log = finishAttempt(log, 1, answer(1, { status: 409, retryInMs: 1000 }));
    log = startAttempt(log, 1, 2);
    log = interruptAttempt(log, 1, 2);
    expect(log.map((e) => [e.state, e.status, e.retryInMs])).toEqual([
      ["done", 409, 1000],
      ["interrupted", null, null],
    ]);
  });
});
