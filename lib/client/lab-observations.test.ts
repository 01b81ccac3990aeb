import { describe, expect, it } from "vitest";
import {
  isCrashObservation,
  isStormObservation,
  loadObservations,
  saveObservation,
} from "@/lib/client/lab-observations";
import type { StormObservation } from "@/lib/client/lab-storm";
import { MemoryStorage } from "@/lib/testing/browser";

const observation = (stormId: string): StormObservation => ({
  stormId,
  sent: 10,
  statuses: [
    { label: "409", count: 9 },
    { label: "201", count: 1 },
  ],
  peakInFlight: 6,
  protocol: "http/1.1",
  durationMs: 120,
});

describe("the lab's observations in sessionStorage", () => {
  it("keeps what the browser saw of each storm across a reload", () => {
    const storage = new MemoryStorage();
    saveObservation(storage, observation("a"));
    saveObservation(storage, observation("b"));
    expect([...loadObservations(storage).keys()]).toEqual(["a", "b"]);
    expect(loadObservations(storage).get("a")).toEqual(observation("a"));
  });

  it("keeps only the newest 40", () => {
    const storage = new MemoryStorage();
    for (let i = 0; i < 45; i++) saveObservation(storage, observation(`s${i}`));
    const kept = [...loadObservations(storage).keys()];
    expect(kept).toHaveLength(40);
    expect(kept[0]).toBe("s5");
    expect(kept.at(-1)).toBe("s44");
  });

  it("survives storage that is broken, full or holds something else", () => {
    const storage = new MemoryStorage();
    storage.setItem("oncepay.lab.observations", "{not json");
    expect(loadObservations(storage).size).toBe(0);
    storage.setItem(
      "oncepay.lab.observations",
      JSON.stringify([{ stormId: 1 }, observation("ok")]),
    );
    expect([...loadObservations(storage).keys()]).toEqual(["ok"]);
    storage.failWrites = true;
    expect(() => saveObservation(storage, observation("x"))).not.toThrow();
    expect(loadObservations(undefined).size).toBe(0);
  });
});

describe("a crash scenario's observation", () => {
  it("is kept beside the storms', and told apart from them", () => {
    const storage = new MemoryStorage();
    saveObservation(storage, observation("storm"));
    saveObservation(storage, {
      stormId: "crash",
      attempts: [
        { atMs: 0, label: "network error" },
        { atMs: 40, label: "409" },
      ],
    });
    const kept = loadObservations(storage);
    expect(isStormObservation(kept.get("storm"))).toBe(true);
    expect(isCrashObservation(kept.get("crash"))).toBe(true);
    expect(isCrashObservation(kept.get("storm"))).toBe(false);
  });
});
