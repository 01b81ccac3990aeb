import { explainCrash, explainStorm, type StormVerdict } from "@/lib/lab/explain";
import type { StormReport } from "@/lib/lab/storms";
import { LAB_STRATEGIES, type LabStrategy } from "@/lib/lab/strategies";

/**
 * The lab's comparison, as data: per design, what its latest storm and its
 * latest crash run left (the server's reports: our tables and the
 * provider's ledger) and the verdict its card gives. Pure, so the chart and
 * its tests share it; nothing here is counted in the browser.
 */
export type Outcome = StormVerdict["outcome"];

export interface RunFigures {
  stormId: string;
  orders: number;
  /** Null when the provider's records could not be read: no verdict then. */
  charges: number | null;
  amountCharged: number | null;
  outcome: Outcome | null;
}

export type ComparisonRow =
  | { strategy: LabStrategy; status: "unavailable" }
  | {
      strategy: LabStrategy;
      status: "measured";
      /** Null until the design has had a storm. */
      storm: (RunFigures & { size: number }) | null;
      crash: RunFigures | null;
    };

export interface ComparisonInput {
  latestStorm: (strategy: LabStrategy) => StormReport | undefined;
  latestCrash: (strategy: LabStrategy) => StormReport | undefined;
  /** Whether this server runs the design (the lab's own answer 403 without demo faults). */
  available: (strategy: LabStrategy) => boolean;
}

export function compareDesigns({
  latestStorm,
  latestCrash,
  available,
}: ComparisonInput): ComparisonRow[] {
  return LAB_STRATEGIES.map((strategy): ComparisonRow => {
    const storm = latestStorm(strategy);
    const crash = latestCrash(strategy);
    // A design switched off now may still have runs from before: show them.
    if (!available(strategy) && !storm && !crash) return { strategy, status: "unavailable" };
    return {
      strategy,
      status: "measured",
      storm: storm ? { ...figuresOf(storm, stormOutcome), size: storm.size } : null,
      crash: crash ? figuresOf(crash, crashOutcome) : null,
    };
  });
}

function figuresOf(
  report: StormReport,
  outcomeOf: (report: StormReport, charges: number) => Outcome,
): RunFigures {
  const provider = report.provider;
  return {
    stormId: report.id,
    orders: report.orders,
    charges: provider.available ? provider.charges : null,
    amountCharged: provider.available ? provider.amountCharged : null,
    outcome: provider.available ? outcomeOf(report, provider.charges) : null,
  };
}

// The cards' own verdicts, so the chart can never disagree with them.
const stormOutcome = (report: StormReport, charges: number) =>
  explainStorm({ strategy: report.strategy, size: report.size, orders: report.orders, charges })
    .outcome;

// A crash's outcome rests on the counts alone; the retries' timings only shape its sentence.
const crashOutcome = (report: StormReport, charges: number) =>
  explainCrash({
    strategy: report.strategy,
    orders: report.orders,
    charges,
    inProgressSeconds: null,
    final: null,
  }).outcome;

/** The largest count among the storms shown: every bar is drawn against it, so lengths compare across designs. */
export function chartMaximum(rows: readonly ComparisonRow[]): number {
  let max = 1;
  for (const row of rows) {
    if (row.status !== "measured" || !row.storm) continue;
    max = Math.max(max, row.storm.orders, row.storm.charges ?? 0);
  }
  return max;
}

// A count of one must stay visible next to a count of 200.
const MIN_VISIBLE_PERCENT = 2;

/** A bar's length, in percent of the chart's width: zero stays zero, any other count at least a sliver. */
export function barPercent(value: number, maximum: number): number {
  if (value <= 0 || maximum <= 0) return 0;
  return Math.min(100, Math.max(MIN_VISIBLE_PERCENT, (value / maximum) * 100));
}
