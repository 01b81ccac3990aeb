"use client";

import { useEffect, useState } from "react";
import {
  DEFAULT_SLOW_DELAY_MS,
  NO_FAULTS,
  demoScenario,
  getDemoSettings,
  isDemoScenarioId,
  putDemoSettings,
  type DemoScenario,
  type DemoScenarioId,
  type ServerFaults,
} from "@/lib/client/demo";

export type DemoAvailability =
  { kind: "checking" } | { kind: "available" } | { kind: "unavailable"; reason: string };

/** The armed scenario survives a reload (the reload demo needs it to), in this tab only. */
const STORAGE_KEY = "oncepay.demo-scenario";

function remember(id: DemoScenarioId, slowDelayMs: number) {
  try {
    if (id === "none") window.sessionStorage.removeItem(STORAGE_KEY);
    else window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ id, slowDelayMs }));
  } catch {
    // Without storage the scenario just does not survive a reload.
  }
}

function recall(): { id: DemoScenarioId; slowDelayMs: number } | null {
  try {
    const value: unknown = JSON.parse(window.sessionStorage.getItem(STORAGE_KEY) ?? "null");
    if (typeof value !== "object" || value === null) return null;
    const { id, slowDelayMs } = value as Record<string, unknown>;
    return isDemoScenarioId(id)
      ? { id, slowDelayMs: typeof slowDelayMs === "number" ? slowDelayMs : DEFAULT_SLOW_DELAY_MS }
      : null;
  } catch {
    return null;
  }
}

function hasFaults(faults: ServerFaults): boolean {
  return faults.networkDelayMs > 0 || faults.loseResponse;
}

/**
 * The demo panel's state. Selecting a scenario arms it for ONE payment: its
 * server-side faults are switched on for this account (PUT) right away, and
 * switched off again (PUT zeros) when the payment settles or another
 * scenario is chosen, so one scenario never leaks into the next.
 */
export function useDemoScenario({ onArmed }: { onArmed?: (scenario: DemoScenario) => void } = {}) {
  const [scenarioId, setScenarioId] = useState<DemoScenarioId>("none");
  // The scenario of the payment that settled last: what follows it on the confirmation.
  const [lastRun, setLastRun] = useState<DemoScenario | null>(null);
  const [slowDelayMs, setSlowDelayMs] = useState(DEFAULT_SLOW_DELAY_MS);
  const [serverFaults, setServerFaults] = useState<ServerFaults>(NO_FAULTS);
  const [availability, setAvailability] = useState<DemoAvailability>({ kind: "checking" });
  const [applying, setApplying] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    const restored = recall();
    // Armed again at once, before the page's payment can settle: back from
    // the bank's page, the order may be settled on the first look, and
    // finishRun must find the scenario it ends. (A microtask, as the
    // checkout's own resume: the first paint is the server's plain page.)
    queueMicrotask(() => {
      if (cancelled || !restored) return;
      setScenarioId(restored.id);
      setSlowDelayMs(restored.slowDelayMs);
    });
    void getDemoSettings().then((result) => {
      if (cancelled) return;
      if (!result.ok) {
        setAvailability({ kind: "unavailable", reason: result.reason });
        return;
      }
      setServerFaults(result.settings);
      setAvailability(
        result.settings.faultsEnabled
          ? { kind: "available" }
          : {
              kind: "unavailable",
              reason: "The app is running without demo faults (DEMO_FAULTS is not on).",
            },
      );
    });
    return () => {
      cancelled = true;
    };
  }, []);

  async function applyFaults(faults: ServerFaults): Promise<boolean> {
    const result = await putDemoSettings(faults);
    if (result.ok) {
      setServerFaults(result.settings);
      return true;
    }
    if (result.status === 403) setAvailability({ kind: "unavailable", reason: result.reason });
    setNotice(`Could not change the server's demo settings: ${result.reason}`);
    return false;
  }

  async function arm(id: DemoScenarioId, delayMs: number) {
    const scenario = demoScenario(id);
    // A scenario that can run without the server's help (the double-click)
    // asks for none where the server allows no faults.
    const faults =
      scenario.needsServerFaults || availability.kind !== "unavailable"
        ? scenario.faults(delayMs)
        : NO_FAULTS;
    // The choice shows at once; Pay waits ("applying") until the server has it.
    setScenarioId(id);
    setLastRun(null);
    onArmed?.(scenario);
    setApplying(true);
    setNotice(null);
    try {
      const needsChange = hasFaults(faults) || hasFaults(serverFaults);
      if (needsChange && !(await applyFaults(faults)) && scenario.needsServerFaults) {
        setScenarioId("none");
        remember("none", delayMs);
        return;
      }
      remember(id, delayMs);
    } finally {
      setApplying(false);
    }
  }

  function select(id: DemoScenarioId) {
    void arm(id, slowDelayMs);
  }

  function changeSlowDelay(ms: number) {
    setSlowDelayMs(ms);
    if (scenarioId === "slow-network") void arm("slow-network", ms);
  }

  /** The payment settled: disarm the scenario and switch its faults off. */
  async function finishRun() {
    if (scenarioId === "none" && !hasFaults(serverFaults)) return;
    const finished = demoScenario(scenarioId);
    const label = finished.label;
    setLastRun(finished);
    setScenarioId("none");
    remember("none", slowDelayMs);
    const reset = await applyFaults(NO_FAULTS);
    setNotice(
      reset
        ? `${label} finished. The server's faults are off again; choose a scenario to run another.`
        : `${label} finished, but the server's faults could not be switched off.`,
    );
  }

  return {
    scenario: demoScenario(scenarioId),
    lastRun,
    slowDelayMs,
    serverFaults,
    availability,
    applying,
    notice,
    select,
    changeSlowDelay,
    finishRun,
  };
}

export type DemoState = ReturnType<typeof useDemoScenario>;
