import {
  barPercent,
  chartMaximum,
  type ComparisonRow,
  type Outcome,
  type RunFigures,
} from "@/lib/lab/comparison";
import type { RaceProgress, RaceResult } from "@/lib/lab/race";
import { LAB_STRATEGY_INFO, type LabStrategy } from "@/lib/lab/strategies";
import { formatMoney } from "@/components/ui/money";
import { AlertIcon, CheckIcon, RepeatIcon, Spinner } from "@/components/ui/icons";

interface DesignComparisonProps {
  rows: ComparisonRow[];
  race: RaceProgress | null;
  raced: RaceResult | null;
  /** The design whose storm is on its way now, and those whose crash run is. */
  storming: LabStrategy | null;
  crashing: (strategy: LabStrategy) => boolean;
}

/**
 * The seven designs at a glance: per design, the orders and charges of its
 * latest storm as bars on one scale, the money taken, and the verdicts of
 * its storm and its crash run, in words and icons as well as colour. Every
 * number is the server's report; the bars only draw it.
 */
export function DesignComparison({ rows, race, raced, storming, crashing }: DesignComparisonProps) {
  const maximum = chartMaximum(rows);
  return (
    <section
      aria-labelledby="compare-heading"
      className="mt-6 rounded-2xl border border-sand bg-white p-4 sm:p-5"
      data-testid="lab-comparison"
    >
      <h2 id="compare-heading" className="font-display text-2xl font-semibold text-espresso">
        The seven designs side by side
      </h2>
      <p className="mt-1 text-sm leading-relaxed text-mocha">
        Each design&apos;s latest storm: orders in our tables, charges and money in the payment
        provider&apos;s records, all bars on one scale. One purchase should make one order and one
        charge.
      </p>
      <RaceStatus race={race} raced={raced} />
      <ol
        className="mt-4 divide-y divide-sand"
        aria-label="Each design's latest storm and crash run"
      >
        {rows.map((row) => (
          <DesignRow
            key={row.strategy}
            row={row}
            maximum={maximum}
            storming={storming === row.strategy}
            crashing={crashing(row.strategy)}
          />
        ))}
      </ol>
    </section>
  );
}

function RaceStatus({ race, raced }: { race: RaceProgress | null; raced: RaceResult | null }) {
  const notRun = raced ? [...raced.skipped] : [];
  return (
    <div role="status" aria-live="polite" className="text-sm text-espresso">
      {race && (
        <p
          className="mt-3 flex items-center gap-2 rounded-xl bg-oat px-3 py-2"
          data-testid="race-progress"
        >
          <Spinner width={16} height={16} className="shrink-0 text-clay" />
          {race.phase === "storms" ? (
            <span>
              Storm <strong className="tabular-nums">{race.index}</strong> of{" "}
              <strong className="tabular-nums">{race.total}</strong>:{" "}
              {race.index > 0 ? LAB_STRATEGY_INFO[race.strategy].name : "starting"}…
            </span>
          ) : (
            <span>
              Crash runs: <strong className="tabular-nums">{race.done}</strong> of{" "}
              <strong className="tabular-nums">{race.total}</strong> done. Each retries until its
              key expires or its lease runs out.
            </span>
          )}
        </p>
      )}
      {notRun.length > 0 && (
        <p
          className="mt-3 flex gap-2 rounded-xl bg-berry-soft px-3 py-2"
          data-testid="race-skipped"
        >
          <AlertIcon width={18} height={18} className="mt-px shrink-0 text-berry" />
          <span>
            Not available on this server, so not raced:{" "}
            {notRun.map((strategy) => LAB_STRATEGY_INFO[strategy].name).join(", ")}.
          </span>
        </p>
      )}
      {raced && raced.failed.length > 0 && (
        <ul className="mt-3 space-y-1 rounded-xl bg-berry-soft px-3 py-2" data-testid="race-failed">
          {raced.failed.map(({ strategy, step, message }) => (
            <li key={`${strategy}-${step}`}>
              {LAB_STRATEGY_INFO[strategy].name}: the {step === "storm" ? "storm" : "crash run"}{" "}
              could not run: {message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function DesignRow({
  row,
  maximum,
  storming,
  crashing,
}: {
  row: ComparisonRow;
  maximum: number;
  storming: boolean;
  crashing: boolean;
}) {
  const info = LAB_STRATEGY_INFO[row.strategy];
  const storm = row.status === "measured" ? row.storm : null;
  const crash = row.status === "measured" ? row.crash : null;
  const broke = storm?.outcome === "broke" || crash?.outcome === "broke";
  return (
    <li
      className={`grid grid-cols-[minmax(0,1fr)_auto] items-baseline gap-x-6 gap-y-2 border-l-4 py-3 pl-3 sm:pl-4 lg:grid-cols-[minmax(0,14rem)_minmax(0,1fr)_6.5rem_minmax(0,15rem)] lg:items-center ${broke ? "border-l-berry" : "border-l-transparent"}`}
      data-testid={`compare-row-${row.strategy}`}
      data-status={row.status}
      data-storm-id={storm?.stormId ?? ""}
      data-crash-id={crash?.stormId ?? ""}
      data-storm-outcome={storm?.outcome ?? ""}
      data-crash-outcome={crash?.outcome ?? ""}
      aria-busy={storming || crashing}
    >
      <h3 className="font-semibold leading-snug text-espresso">{info.name}</h3>
      {row.status === "unavailable" ? (
        <p className="col-span-2 text-sm text-mocha lg:col-span-3">
          Not available on this server: the lab&apos;s own designs need{" "}
          <code className="font-mono text-xs">DEMO_FAULTS=on</code>.
        </p>
      ) : (
        <>
          {storm ? (
            <Bars storm={storm} maximum={maximum} />
          ) : (
            <p className="col-span-2 text-sm text-mocha">
              {storming ? "Storm on its way…" : "Never run yet."}
            </p>
          )}
          {storm && (
            // On a phone it sits on the name's line; on a laptop, in its own column.
            <p className="col-start-2 row-start-1 text-right text-sm text-mocha lg:col-start-auto lg:row-start-auto">
              <span
                className={`font-semibold tabular-nums ${storm.charges !== null && storm.charges > 1 ? "text-berry" : "text-espresso"}`}
                data-testid="compare-money"
              >
                {storm.amountCharged === null ? "?" : formatMoney(storm.amountCharged)}
              </span>
              <span className="ml-1 text-xs lg:ml-0 lg:block">money taken</span>
            </p>
          )}
          <div className="col-span-2 flex flex-wrap items-center gap-1.5 lg:col-span-1">
            <VerdictBadge
              run="Storm"
              figures={storm}
              busy={storming}
              testId="compare-storm-verdict"
            />
            <VerdictBadge
              run="Crash"
              figures={crash}
              busy={crashing}
              testId="compare-crash-verdict"
            />
            {crash && crash.charges !== null && (
              <span className="text-xs text-mocha tabular-nums" data-testid="compare-crash-counts">
                crash run: {crash.orders} {crash.orders === 1 ? "order" : "orders"}, {crash.charges}{" "}
                {crash.charges === 1 ? "charge" : "charges"}
              </span>
            )}
          </div>
        </>
      )}
    </li>
  );
}

function Bars({ storm, maximum }: { storm: RunFigures & { size: number }; maximum: number }) {
  const overcharged = storm.charges !== null && storm.charges > 1;
  return (
    <dl className="col-span-2 grid min-w-0 grid-cols-[4.5rem_minmax(0,1fr)_2.5rem] lg:col-span-1 items-center gap-x-2 gap-y-1 text-sm">
      <Bar
        label="Orders"
        value={storm.orders}
        maximum={maximum}
        tone={storm.orders > 1 ? "fill-berry" : "fill-latte"}
        testId="compare-orders"
      />
      <Bar
        label="Charges"
        value={storm.charges}
        maximum={maximum}
        tone={overcharged ? "fill-berry" : "fill-roast"}
        testId="compare-charges"
      />
      <dt className="sr-only">Requests sent</dt>
      <dd className="col-span-3 text-xs text-mocha">
        of <span data-testid="compare-sent">{storm.size}</span> requests
      </dd>
    </dl>
  );
}

function Bar({
  label,
  value,
  maximum,
  tone,
  testId,
}: {
  label: string;
  value: number | null;
  maximum: number;
  tone: string;
  testId: string;
}) {
  return (
    <>
      <dt className="text-xs text-mocha">{label}</dt>
      <dd className="contents">
        <svg className="h-3 w-full" aria-hidden="true" focusable="false">
          <rect width="100%" height="100%" rx="6" className="fill-oat" />
          {value !== null && value > 0 && (
            <rect width={`${barPercent(value, maximum)}%`} height="100%" rx="6" className={tone} />
          )}
        </svg>
        <span
          className={`text-right font-semibold tabular-nums ${value !== null && value > 1 ? "text-berry" : "text-espresso"}`}
          data-testid={testId}
        >
          {value ?? "?"}
        </span>
      </dd>
    </>
  );
}

const VERDICT: Record<Outcome, { word: string; tone: string; Icon: typeof AlertIcon }> = {
  broke: { word: "broke", tone: "bg-berry text-cream", Icon: AlertIcon },
  lucky: { word: "lucky", tone: "bg-honey/40 text-roast", Icon: RepeatIcon },
  held: { word: "held", tone: "bg-sage-soft text-sage", Icon: CheckIcon },
};

function VerdictBadge({
  run,
  figures,
  busy,
  testId,
}: {
  run: "Storm" | "Crash";
  figures: RunFigures | null;
  busy: boolean;
  testId: string;
}) {
  const base =
    "inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-semibold whitespace-nowrap";
  if (busy)
    return (
      <span className={`${base} bg-oat text-mocha`} data-testid={testId}>
        <Spinner width={12} height={12} /> {run}: running
      </span>
    );
  if (!figures || figures.outcome === null)
    return (
      <span className={`${base} bg-cream text-mocha ring-1 ring-sand`} data-testid={testId}>
        {run}: {figures ? "no verdict" : "not run"}
      </span>
    );
  const { word, tone, Icon } = VERDICT[figures.outcome];
  return (
    <span className={`${base} ${tone}`} data-testid={testId} data-outcome={figures.outcome}>
      <Icon width={12} height={12} aria-hidden="true" /> {run}: {word}
    </span>
  );
}
